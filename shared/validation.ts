import type { z } from 'zod';
import { quote, ValidationError } from './errors';

/**
 * Validation reasons in the API's own words ("must be between 0 and 2"), given to each parse (no
 * global zod configuration). A schema that states its own message still wins.
 */
const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;

function sizeUnit(origin: string): string | undefined {
  if (origin === 'string') return 'character';
  if (origin === 'array' || origin === 'set') return 'item';
  return undefined;
}

type RawIssue = z.core.$ZodRawIssue;

function reasonFor(issue: RawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required';
      return `must be ${issue.expected === 'int' ? 'an integer' : `a${/^[aeiou]/.test(issue.expected) ? 'n' : ''} ${issue.expected}`}`;
    case 'too_small': {
      const unit = sizeUnit(issue.origin);
      const min = Number(issue.minimum);
      if (unit) return min === 1 && unit === 'character' ? 'must not be empty' : `must have at least ${plural(min, unit)}`;
      return `must be ${issue.inclusive === false ? 'greater than' : 'at least'} ${min}`;
    }
    case 'too_big': {
      const unit = sizeUnit(issue.origin);
      const max = Number(issue.maximum);
      if (unit) return `must have at most ${plural(max, unit)}`;
      return `must be ${issue.inclusive === false ? 'less than' : 'at most'} ${max}`;
    }
    case 'invalid_value':
      return `must be one of: ${issue.values.map(String).join(', ')}`;
    case 'invalid_format':
      return issue.format === 'regex' ? 'has an invalid format' : `must be a valid ${issue.format}`;
    case 'unrecognized_keys':
      return 'is not a known field';
    case 'invalid_union':
      return 'does not match any allowed shape';
    default:
      return undefined;
  }
}

/** `steps[0].config.model` from ['steps', 0, 'config', 'model']. */
export function fieldPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${quote(String(part))}` : quote(String(part));
  }
  return out;
}

/** The first problem of a failed parse, as the API's 400 (details name the field). */
export function toValidationError(error: z.ZodError, prefix?: string): ValidationError {
  const issue = error.issues[0]!;
  let path: PropertyKey[] = [...issue.path];
  if (issue.code === 'unrecognized_keys') path = [...path, issue.keys[0]!];
  if (prefix) path = [prefix, ...path];
  const field = fieldPath(path) || 'body';
  const extra: Record<string, unknown> = {};
  if (error.issues.length > 1) {
    extra.issues = error.issues.slice(0, 20).map((i) => ({
      field: fieldPath(i.code === 'unrecognized_keys' ? [...i.path, ...i.keys] : i.path) || 'body',
      reason: i.message,
    }));
  }
  return new ValidationError(field, issue.message, extra);
}

/** Parses with the API's messages; a failure is the 400 naming the first field (under `prefix`). */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, prefix?: string): z.infer<S> {
  const parsed = schema.safeParse(value, { error: reasonFor });
  if (!parsed.success) throw toValidationError(parsed.error, prefix);
  return parsed.data;
}
