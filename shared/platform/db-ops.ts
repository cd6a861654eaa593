import { z } from 'zod';
import { ValidationError } from '../errors';
import type { Runtime } from '../runtime';
import type { Store } from '../store';
import type { TenantScope } from '../tenancy';
import { equalityOf, matches, valueAt, MAX_CONDITIONS, MAX_IN_VALUES, OPERATORS, parseWhere, type Condition, type FieldInfo } from './conditions';
import { OPERATIONS, TABLES, type FieldDef, type Lookup, type Row, type TableDef } from './logical-tables';

/** Rows one query examines at most (a count: COUNT_SCAN); past it the answer carries a cursor. */
const QUERY_SCAN = 1000;
const COUNT_SCAN = 10_000;

/** Fields every table has: always the token's own tenant and schema. */
const SCOPE_FIELDS: Record<string, FieldDef> = {
  tenantId: { type: 'string', description: 'Always the token’s tenant' },
  schema: { type: 'string', description: 'Always the token’s schema' },
};

export const dbOpRequest = z.strictObject({
  operation: z.enum(OPERATIONS),
  table: z.string().min(1).max(128),
  key: z.record(z.string(), z.unknown()).optional(),
  item: z.record(z.string(), z.unknown()).optional(),
  where: z.record(z.string(), z.unknown()).optional(),
  select: z.array(z.string().min(1).max(128)).min(1).max(50).optional(),
  limit: z.int().min(1).max(100).default(20),
  cursor: z.string().min(1).max(2048).optional(),
});
export type DbOpRequest = z.infer<typeof dbOpRequest>;

const TABLE_NAME = /^(?:([A-Za-z0-9_]{1,70})\.)?([a-z_]{1,64})$/;

/** `agents` or `<schema>.agents`; a schema other than the token's is a scope error. */
function resolveTable(rt: Runtime, scope: TenantScope, name: string): TableDef {
  const m = TABLE_NAME.exec(name);
  if (!m) throw new ValidationError('table', 'is not an allowed table name');
  if (m[1] !== undefined && m[1] !== scope.schema) {
    throw new ValidationError('table', `names schema ${m[1]}, outside the access token's schema`, { scope: 'schema' });
  }
  const table = TABLES.get(m[2]!);
  if (!table) throw new ValidationError('table', `is not an allowed table (${[...TABLES.keys()].join(', ')})`);
  return table;
}

function fieldOf(table: TableDef, name: string): FieldInfo | undefined {
  if (Object.hasOwn(table.fields, name)) return table.fields[name];
  if (Object.hasOwn(SCOPE_FIELDS, name)) return SCOPE_FIELDS[name];
  return table.dynamicField?.(name);
}

/** A tenantId or schema value anywhere in a request must be the token's own. */
function checkScopeValue(rt: Runtime, scope: TenantScope, path: string, field: string, value: unknown): void {
  const own = field === 'tenantId' ? scope.tenantId : scope.schema;
  const values = Array.isArray(value) ? value : [value];
  if (values.some((v) => v !== own)) throw new ValidationError(path, `reaches outside the access token's ${field === 'tenantId' ? 'tenant' : 'schema'}`, { scope: field });
}

function checkPattern(table: TableDef, path: string, field: string, value: unknown): void {
  const def = Object.hasOwn(table.fields, field) ? table.fields[field] : undefined;
  if (!def?.pattern || value === null) return;
  if (typeof value !== 'string' || !def.pattern.test(value)) throw new ValidationError(path, 'has an invalid format for this field', { scope: 'key' });
}

function parseKey(rt: Runtime, scope: TenantScope, table: TableDef, key: Record<string, unknown> | undefined): Lookup {
  if (!key) throw new ValidationError('key', `is required (${table.key.join(', ')})`);
  const values: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(key)) {
    if (Object.hasOwn(SCOPE_FIELDS, field)) {
      checkScopeValue(rt, scope, `key.${field}`, field, value);
      continue;
    }
    const alternativeOf = Object.entries(table.keyAlternatives ?? {}).find(([, alt]) => alt === field)?.[0];
    if (!table.key.includes(field) && !(alternativeOf && table.key.includes(alternativeOf))) {
      throw new ValidationError(`key.${field.slice(0, 100)}`, `is not part of this table's key (${table.key.join(', ')})`);
    }
    checkPattern(table, `key.${field}`, field, value);
    values[field] = value;
  }
  for (const field of table.key) {
    const alt = table.keyAlternatives?.[field];
    if (typeof values[field] !== 'string' && !(alt && typeof values[alt] === 'string')) {
      throw new ValidationError(`key.${field}`, 'is required');
    }
  }
  return (field) => values[field];
}

function checkItem(rt: Runtime, scope: TenantScope, table: TableDef, item: Record<string, unknown> | undefined, allowKeyFields: boolean): Row {
  if (!item) throw new ValidationError('item', 'is required');
  const out: Row = {};
  for (const [field, value] of Object.entries(item)) {
    if (Object.hasOwn(SCOPE_FIELDS, field)) {
      checkScopeValue(rt, scope, `item.${field}`, field, value);
      continue;
    }
    if (!Object.hasOwn(table.fields, field)) throw new ValidationError(`item.${field.slice(0, 100)}`, 'is not a field of this table');
    const def = table.fields[field]!;
    const isKey = table.key.includes(field);
    if (!def.writable && !(allowKeyFields && isKey)) throw new ValidationError(`item.${field}`, 'is read-only');
    if (isKey) checkPattern(table, `item.${field}`, field, value);
    out[field] = value;
  }
  return out;
}

/** A cursor continues the same read only: it is signed for the table, the partition and the key prefix read. */
const cursorScope = (table: string, pk: string, skPrefix: string | undefined) => `${table}\u0000${pk}\u0000${skPrefix ?? ''}`;

const withScope = (scope: TenantScope, row: Row): Row => ({ ...row, tenantId: scope.tenantId, schema: scope.schema });

function project(row: Row, select: string[] | undefined): Row {
  if (!select) return row;
  const out: Row = {};
  for (const field of select) {
    const value = valueAt(row, field);
    if (value !== undefined) out[field] = value;
  }
  return out;
}

/** Reads matching rows of one partition in key order, from the cursor on, examining at most `maxScan`. */
async function scanPartition(
  store: Store,
  scope: TenantScope,
  tableLabel: string,
  table: TableDef,
  conditions: Condition[],
  options: { limit: number; maxScan: number; cursor?: string },
  onMatch: (row: Row) => void,
) {
  const eq: Lookup = (field) => equalityOf(conditions, field);
  const { pk, skPrefix } = table.locate(scope, eq);
  const signedFor = cursorScope(tableLabel, pk, skPrefix);
  let after = store.db.cursors.decode(signedFor, options.cursor);
  let matched = 0;
  let scanned = 0;
  let exhausted = false;
  // Pages start a few times the rows still wanted and double while the filter keeps rejecting,
  // so a selective query needs few round trips and an unfiltered one reads little more than it returns.
  let pageSize = Math.max(25, Math.min(1000, (options.limit - matched) * 4));
  while (matched < options.limit && scanned < options.maxScan) {
    const out = await store.partitions.queryPage({ pk, skPrefix }, { after, limit: Math.min(options.maxScan - scanned, pageSize) });
    const items = out.items;
    let stoppedEarly = false;
    for (const [i, item] of items.entries()) {
      scanned++;
      after = String(item.sk);
      const stored = table.toRow(item);
      const row = stored && withScope(scope, stored);
      if (row && matches(row, conditions)) {
        onMatch(row);
        if (++matched >= options.limit) {
          stoppedEarly = i < items.length - 1;
          break;
        }
      }
    }
    if (!out.more && !stoppedEarly) {
      exhausted = true;
      break;
    }
    pageSize = Math.min(1000, pageSize * 2);
  }
  return { scanned, nextCursor: exhausted || after === undefined ? null : store.db.cursors.encode(signedFor, { sk: after }) };
}

/** Runs one db/ops request inside the token's scope. Every name comes from the allow-list. */
export async function runDbOperation(rt: Runtime, scope: TenantScope, req: DbOpRequest) {
  const table = resolveTable(rt, scope, req.table);
  const label = TABLE_NAME.exec(req.table)![2]!;
  if (!table.operations.includes(req.operation)) {
    throw new ValidationError('operation', `is not allowed on ${label} (${table.operations.join(', ')})`);
  }
  for (const [i, field] of (req.select ?? []).entries()) {
    if (!fieldOf(table, field)) throw new ValidationError(`select[${i}]`, `${field.slice(0, 100)} is not a field of this table`);
  }
  const conditions = parseWhere(req.where, (name) => fieldOf(table, name));
  for (const c of conditions) {
    if (Object.hasOwn(SCOPE_FIELDS, c.field)) {
      if (c.op !== 'eq' && c.op !== 'in' && c.op !== 'exists') throw new ValidationError(`where.${c.field}`, 'may only be compared for equality with the token’s own value');
      if (c.op !== 'exists') checkScopeValue(rt, scope, `where.${c.field}`, c.field, c.value);
    } else if (c.op === 'eq') checkPattern(table, `where.${c.field}`, c.field, c.value);
  }
  const base = { operation: req.operation, table: label };

  switch (req.operation) {
    case 'get': {
      const key = parseKey(rt, scope, table, req.key);
      const { pk } = table.locate(scope, key);
      const item = await rt.store.partitions.getItem({ pk, sk: table.sortKey(key, scope) });
      const row = item ? table.toRow(item) : undefined;
      return { ...base, item: row ? project(withScope(scope, row), req.select) : null };
    }
    case 'query': {
      const items: Row[] = [];
      const page = await scanPartition(rt.store, scope, label, table, conditions, { limit: req.limit, maxScan: QUERY_SCAN, cursor: req.cursor }, (row) => items.push(project(row, req.select)));
      return { ...base, items, nextCursor: page.nextCursor, hasMore: page.nextCursor !== null, scanned: page.scanned };
    }
    case 'count': {
      let count = 0;
      const page = await scanPartition(rt.store, scope, label, table, conditions, { limit: Number.MAX_SAFE_INTEGER, maxScan: COUNT_SCAN, cursor: req.cursor }, () => count++);
      return { ...base, count, complete: page.nextCursor === null, nextCursor: page.nextCursor, scanned: page.scanned };
    }
    case 'put': {
      const item = checkItem(rt, scope, table, req.item, true);
      return { ...base, item: withScope(scope, (await table.put!(rt, scope, item))) };
    }
    case 'update': {
      const key = parseKey(rt, scope, table, req.key);
      const changes = checkItem(rt, scope, table, req.item, false);
      if (Object.keys(changes).length === 0) throw new ValidationError('item', 'must change at least one writable field');
      const row = await table.update!(rt, scope, key, changes);
      return { ...base, item: row ? withScope(scope, row) : null, updated: row !== undefined };
    }
    case 'delete': {
      if (req.key) return { ...base, deleted: await table.remove!(rt, scope, parseKey(rt, scope, table, req.key)) };
      const bulk = table.removeWhere;
      if (!bulk || conditions.length === 0) throw new ValidationError('key', `is required (${table.key.join(', ')})`);
      const own = conditions.filter((c) => !Object.hasOwn(SCOPE_FIELDS, c.field));
      const bad = own.find((c) => c.op !== 'eq' || !bulk.fields.includes(c.field));
      if (bad) throw new ValidationError(`where.${bad.field}`, `bulk delete takes only equality on ${bulk.fields.join(', ')}`);
      return { ...base, deleted: await bulk.run(rt, scope, (field) => equalityOf(own, field)) };
    }
  }
}

/** `GET /platform/db/ops`: what can be asked, table by table. */
export function describeTables() {
  return {
    operations: OPERATIONS,
    operators: OPERATORS,
    limits: { conditions: MAX_CONDITIONS, inValues: MAX_IN_VALUES, pageSize: 100, rowsExaminedPerQuery: QUERY_SCAN, rowsExaminedPerCount: COUNT_SCAN },
    tables: [...TABLES].map(([name, t]) => ({
      name,
      description: t.description,
      key: t.key,
      partition: t.partition,
      operations: t.operations,
      writable: Object.entries(t.fields).filter(([, f]) => f.writable).map(([n]) => n),
      fields: Object.entries({ ...t.fields, ...SCOPE_FIELDS }).map(([n, f]) => ({
        name: n,
        type: f.type,
        nullable: f.nullable ?? false,
        writable: f.writable ?? false,
        description: f.description,
      })),
      ...(t.dynamicField ? { dynamicFields: 'data.<name> (letters, digits, _) in conditions and select' } : {}),
    })),
  };
}
