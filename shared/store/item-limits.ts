import { AppError, ValidationError } from '../errors';

/**
 * DynamoDB's limits on one item, measured as DynamoDB measures them: 400 KB (409,600 bytes) for
 * names and values together; a partition key of at most 2,048 bytes of UTF-8 and a sort key of
 * 1,024; containers nested at most 32 levels, the item counting as the first (so a top-level
 * attribute's value holds at most 31).
 */
export const ITEM_LIMITS = { bytes: 400 * 1024, partitionKeyBytes: 2048, sortKeyBytes: 1024, depth: 32 } as const;

/** Bytes DynamoDB counts for a value (its sizing rules: strings in UTF-8, numbers by significant digits, 3 bytes per container plus 1 per element). */
export function storedSize(value: unknown): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') total += Buffer.byteLength(v);
    else if (typeof v === 'number' || typeof v === 'bigint') total += Math.ceil(String(v).replace(/[-.]|e.*$/gi, '').replace(/^0+/, '').length / 2) + 1;
    else if (v === null || v === undefined || typeof v === 'boolean') total += 1;
    else if (v instanceof Uint8Array) total += v.byteLength;
    else if (v instanceof Set) {
      total += 3;
      for (const member of v) stack.push(member);
    } else if (Array.isArray(v)) {
      total += 3 + v.length;
      for (const element of v) stack.push(element);
    } else if (typeof v === 'object') {
      const entries = Object.entries(v as Record<string, unknown>).filter(([, e]) => e !== undefined);
      total += 3 + entries.length;
      for (const [name, element] of entries) {
        total += Buffer.byteLength(name);
        stack.push(element);
      }
    }
  }
  return total;
}

/** The path to the first point of `value` nested deeper than `levels` containers, if any. */
function tooDeep(value: unknown, levels: number, root: string): string | undefined {
  const stack: Array<{ v: unknown; path: string; depth: number }> = [{ v: value, path: root, depth: 0 }];
  while (stack.length > 0) {
    const { v, path, depth } = stack.pop()!;
    if (v === null || typeof v !== 'object' || v instanceof Uint8Array || v instanceof Set) continue;
    if (depth >= levels) return path;
    const children: Array<[string, unknown]> = Array.isArray(v) ? v.map((e, i) => [`${path}[${i}]`, e]) : Object.entries(v).map(([k, e]) => [`${path}.${k}`, e]);
    for (const [childPath, child] of children) stack.push({ v: child, path: childPath, depth: depth + 1 });
  }
  return undefined;
}

const kb = (bytes: number) => `${Math.ceil(bytes / 1024)} KB`;

/**
 * Refuses, before it is sent, an item DynamoDB would refuse: 413 naming the attribute that takes
 * the most room (attributes are named as the request fields they hold), 400 naming the path that
 * nests too deep or the key part that is too long. What it cannot see (an update growing an item
 * it has not read) the store's mapping of DynamoDB's own refusal still answers.
 */
export function assertStorableItem(item: Record<string, unknown>): void {
  for (const [name, limit] of [['pk', ITEM_LIMITS.partitionKeyBytes], ['sk', ITEM_LIMITS.sortKeyBytes]] as const) {
    const key = item[name];
    if (typeof key === 'string' && Buffer.byteLength(key) > limit) {
      throw new ValidationError('key', `names something too long to store: a key holds at most ${limit} bytes of UTF-8, this one is ${Buffer.byteLength(key)}`);
    }
  }
  const sizes = Object.entries(item)
    .filter(([, v]) => v !== undefined)
    .map(([name, v]) => ({ name, bytes: Buffer.byteLength(name) + storedSize(v) }));
  const total = sizes.reduce((sum, s) => sum + s.bytes, 0);
  if (total > ITEM_LIMITS.bytes) {
    const largest = sizes.reduce((a, b) => (b.bytes > a.bytes ? b : a));
    throw new AppError(
      'PAYLOAD_TOO_LARGE',
      `What this request would store takes ${kb(total)}, over the ${kb(ITEM_LIMITS.bytes)} one record holds; ${largest.name} takes ${kb(largest.bytes)}: send less`,
      { field: largest.name, sizeBytes: total, limitBytes: ITEM_LIMITS.bytes },
    );
  }
  for (const [name, value] of Object.entries(item)) {
    const path = tooDeep(value, ITEM_LIMITS.depth - 1, name);
    if (path) throw new ValidationError(path.length > 200 ? `${path.slice(0, 200)}…` : path, `nests deeper than the ${ITEM_LIMITS.depth} levels a stored record holds`);
  }
}

/**
 * The size an update's values add, checked against the whole item's limit (the item's other
 * attributes are not known here): 413 naming the attribute the largest value is set on.
 */
export function assertStorableUpdate(expression: string | undefined, names: Record<string, string> | undefined, values: Record<string, unknown> | undefined): void {
  if (!values) return;
  const sizes = Object.entries(values).map(([placeholder, v]) => ({ placeholder, bytes: storedSize(v) }));
  const total = sizes.reduce((sum, s) => sum + s.bytes, 0);
  if (total <= ITEM_LIMITS.bytes) return;
  const largest = sizes.reduce((a, b) => (b.bytes > a.bytes ? b : a));
  const target = new RegExp(`([#\\w.]+)\\s*=\\s*${largest.placeholder.replace(/[$]/g, '\\$&')}\\b`).exec(expression ?? '')?.[1];
  const field = target?.split('.').map((part) => names?.[part] ?? part).join('.') ?? largest.placeholder.replace(/^:/, '');
  throw new AppError('PAYLOAD_TOO_LARGE', `What this request would store takes ${kb(total)}, over the ${kb(ITEM_LIMITS.bytes)} one record holds; ${field} takes ${kb(largest.bytes)}: send less`, {
    field,
    sizeBytes: total,
    limitBytes: ITEM_LIMITS.bytes,
  });
}

/** Every item and update a write command carries, checked as above (Put, Update, TransactWrite, BatchWrite). */
export function assertStorableWrite(input: unknown): void {
  const i = input as {
    Item?: Record<string, unknown>;
    UpdateExpression?: string;
    ExpressionAttributeNames?: Record<string, string>;
    ExpressionAttributeValues?: Record<string, unknown>;
    TransactItems?: Array<{ Put?: { Item: Record<string, unknown> }; Update?: { UpdateExpression?: string; ExpressionAttributeNames?: Record<string, string>; ExpressionAttributeValues?: Record<string, unknown> } }>;
    RequestItems?: Record<string, Array<{ PutRequest?: { Item: Record<string, unknown> } }>>;
  };
  if (i.Item) assertStorableItem(i.Item);
  if (i.UpdateExpression) assertStorableUpdate(i.UpdateExpression, i.ExpressionAttributeNames, i.ExpressionAttributeValues);
  for (const t of i.TransactItems ?? []) {
    if (t.Put) assertStorableItem(t.Put.Item);
    if (t.Update) assertStorableUpdate(t.Update.UpdateExpression, t.Update.ExpressionAttributeNames, t.Update.ExpressionAttributeValues);
  }
  for (const requests of Object.values(i.RequestItems ?? {})) for (const r of requests) if (r.PutRequest) assertStorableItem(r.PutRequest.Item);
}
