import { ValidationError } from './errors';

/**
 * The one rule for JSON that reaches the product from outside (request bodies, free-form fields
 * such as workflow `parameters` and db/ops `records.data`): it must be storable as it was sent.
 * DynamoDB nests at most 32 levels (a body's fields are stored at their level or one above), the
 * SDK refuses numbers beyond ±2^53, and keys that name an object's prototype are refused so that
 * no merge or spread can reach it.
 */
export const JSON_LIMITS = { depth: 32, maxNumber: Number.MAX_SAFE_INTEGER } as const;

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

function pathOf(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent || 'body'}[${key}]`;
  const safe = /^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key.slice(0, 100));
  return parent ? `${parent}.${safe}` : safe;
}

/**
 * Throws the API's 400 naming the first offending field (under `root`; a request body's fields are
 * named as the validation errors name them, `parameters.x`). Walks with its own stack,
 * so a value nested ten thousand levels deep is refused, not a stack overflow.
 */
export function assertStorableJson(value: unknown, root = ''): void {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: root, depth: 0 }];
  while (stack.length > 0) {
    const { value: v, path, depth } = stack.pop()!;
    if (typeof v === 'number') {
      if (!Number.isFinite(v) || Math.abs(v) > JSON_LIMITS.maxNumber) {
        throw new ValidationError(path || 'body', `must be a finite number between -${JSON_LIMITS.maxNumber} and ${JSON_LIMITS.maxNumber}`);
      }
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth >= JSON_LIMITS.depth) throw new ValidationError(path || 'body', `nests deeper than ${JSON_LIMITS.depth} levels`);
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: pathOf(path, i), depth: depth + 1 });
      continue;
    }
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      if (FORBIDDEN_KEYS.has(key)) throw new ValidationError(pathOf(path, key), 'is a reserved name (__proto__, constructor and prototype are refused)');
      stack.push({ value: (v as Record<string, unknown>)[key], path: pathOf(path, key), depth: depth + 1 });
    }
  }
}
