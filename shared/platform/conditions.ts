import { ValidationError } from '../errors';
import { isPlainObject } from '../json-objects';

/**
 * `where` of a db/ops request: `{ field: value }` (equality) or `{ field: { op: value, … } }`.
 * Conditions are checked against the table's allow-list and types, then evaluated in code on the
 * rows read from the table's own partition: nothing the caller sends becomes an expression.
 */
export const OPERATORS = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'between', 'begins_with', 'in', 'exists'] as const;
export type Operator = (typeof OPERATORS)[number];

export type FieldType = 'string' | 'number' | 'boolean' | 'object' | 'array' | 'any';

export interface Condition {
  field: string;
  op: Operator;
  value: unknown;
}

export const MAX_CONDITIONS = 20;
export const MAX_IN_VALUES = 100;
export const MAX_STRING = 1024;

type Scalar = string | number | boolean | null;

function scalarOf(path: string, value: unknown, type: FieldType, nullable: boolean): Scalar {
  if (value === null) {
    if (nullable || type === 'any') return null;
    throw new ValidationError(path, 'must not be null');
  }
  if (typeof value === 'string') {
    if (value.length > MAX_STRING) throw new ValidationError(path, `must have at most ${MAX_STRING} characters`);
    if (type === 'string' || type === 'any') return value;
  }
  if (typeof value === 'number' && Number.isFinite(value) && (type === 'number' || type === 'any')) return value;
  if (typeof value === 'boolean' && (type === 'boolean' || type === 'any')) return value;
  if (isPlainObject(value) || Array.isArray(value)) throw new ValidationError(path, 'must be a single value, not an object or array (conditions do not nest)');
  throw new ValidationError(path, `must be a ${type === 'any' ? 'string, number or boolean' : type}`);
}

export interface FieldInfo {
  type: FieldType;
  nullable?: boolean;
}

/** Parses and checks `where` against the fields a table allows; errors name `where.<field>.<op>`. */
export function parseWhere(where: unknown, fieldOf: (name: string) => FieldInfo | undefined): Condition[] {
  if (where === undefined) return [];
  if (!isPlainObject(where)) throw new ValidationError('where', 'must be an object of field conditions');
  const entries = Object.entries(where);
  const conditions: Condition[] = [];
  for (const [field, spec] of entries) {
    const info = fieldOf(field);
    if (!info) throw new ValidationError(`where.${field.slice(0, 100)}`, 'is not a field of this table');
    const ops: Array<[string, unknown]> = isPlainObject(spec) ? Object.entries(spec) : [['eq', spec]];
    if (ops.length === 0) throw new ValidationError(`where.${field}`, 'must name at least one operator');
    for (const [op, value] of ops) {
      const path = isPlainObject(spec) ? `where.${field}.${op.slice(0, 50)}` : `where.${field}`;
      if (!(OPERATORS as readonly string[]).includes(op)) throw new ValidationError(path, `is not an operator (${OPERATORS.join(', ')})`);
      if (conditions.length >= MAX_CONDITIONS) throw new ValidationError('where', `must have at most ${MAX_CONDITIONS} conditions`);
      const comparable = info.type === 'string' || info.type === 'number' || info.type === 'any';
      switch (op as Operator) {
        case 'exists':
          if (typeof value !== 'boolean') throw new ValidationError(path, 'must be true or false');
          break;
        case 'eq':
        case 'ne':
          if (info.type === 'object' || info.type === 'array') throw new ValidationError(path, `cannot compare a whole ${info.type}; use exists`);
          scalarOf(path, value, info.type, info.nullable ?? false);
          break;
        case 'lt':
        case 'lte':
        case 'gt':
        case 'gte':
          if (!comparable) throw new ValidationError(path, `does not apply to a ${info.type} field`);
          scalarOf(path, value, info.type, false);
          break;
        case 'begins_with':
          if (info.type !== 'string' && info.type !== 'any') throw new ValidationError(path, `does not apply to a ${info.type} field`);
          if (typeof value !== 'string' || value.length === 0) throw new ValidationError(path, 'must be a non-empty string');
          scalarOf(path, value, 'string', false);
          break;
        case 'between': {
          if (!comparable) throw new ValidationError(path, `does not apply to a ${info.type} field`);
          if (!Array.isArray(value) || value.length !== 2) throw new ValidationError(path, 'must be [low, high]');
          const [lo, hi] = value.map((v, i) => scalarOf(`${path}[${i}]`, v, info.type, false));
          if (typeof lo !== typeof hi) throw new ValidationError(path, 'must have two values of the same type');
          break;
        }
        case 'in':
          if (info.type === 'object' || info.type === 'array') throw new ValidationError(path, `does not apply to a ${info.type} field`);
          if (!Array.isArray(value) || value.length === 0 || value.length > MAX_IN_VALUES) throw new ValidationError(path, `must be an array of 1–${MAX_IN_VALUES} values`);
          value.forEach((v, i) => scalarOf(`${path}[${i}]`, v, info.type, info.nullable ?? false));
          break;
      }
      conditions.push({ field, op: op as Operator, value });
    }
  }
  return conditions;
}

function compare(a: unknown, b: unknown): number | undefined {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return undefined;
}

/** A field's value in a row; `data.total` reads one level into an object field. */
export function valueAt(row: Record<string, unknown>, field: string): unknown {
  if (!field.includes('.')) return row[field];
  const [head, tail] = field.split('.', 2) as [string, string];
  const inner = row[head];
  return isPlainObject(inner) && Object.hasOwn(inner, tail) ? inner[tail] : undefined;
}

export function matches(row: Record<string, unknown>, conditions: Condition[]): boolean {
  return conditions.every(({ field, op, value }) => {
    const actual = valueAt(row, field);
    switch (op) {
      case 'exists':
        return (actual !== undefined && actual !== null) === value;
      case 'eq':
        return (actual ?? null) === value;
      case 'ne':
        return (actual ?? null) !== value;
      case 'in':
        return (value as unknown[]).includes(actual ?? null);
      case 'begins_with':
        return typeof actual === 'string' && actual.startsWith(value as string);
      case 'between': {
        const [lo, hi] = value as [unknown, unknown];
        const a = compare(actual, lo);
        const b = compare(actual, hi);
        return a !== undefined && b !== undefined && a >= 0 && b <= 0;
      }
      default: {
        const c = compare(actual, value);
        if (c === undefined) return false;
        return op === 'lt' ? c < 0 : op === 'lte' ? c <= 0 : op === 'gt' ? c > 0 : c >= 0;
      }
    }
  });
}

/** The value a condition pins a field to, when it is an equality. */
export function equalityOf(conditions: Condition[], field: string): unknown {
  return conditions.find((c) => c.field === field && c.op === 'eq')?.value;
}
