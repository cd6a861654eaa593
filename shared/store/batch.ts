import { BatchGetCommand, BatchWriteCommand, QueryCommand, type BatchWriteCommandInput } from './dynamo-commands';
import { eachLimited } from '../each-limited';
import type { Db } from './db';
import type { ItemKey } from './keys';

export type WriteRequest = NonNullable<BatchWriteCommandInput['RequestItems']>[string][number];

/**
 * BatchWriteItem in groups of 25 (a few groups in flight at once), resending what DynamoDB leaves
 * unprocessed, with backoff.
 */
async function batchWrite(db: Db, requests: WriteRequest[], concurrency = 4): Promise<void> {
  const groups: WriteRequest[][] = [];
  for (let i = 0; i < requests.length; i += 25) groups.push(requests.slice(i, i + 25));
  await eachLimited(groups, concurrency, (group) => writeGroup(db, group));
}

async function writeGroup(db: Db, group: WriteRequest[]): Promise<void> {
  let pending: WriteRequest[] = group;
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** attempt)));
    if (attempt > 8) throw new Error('DynamoDB left batch writes unprocessed after 8 retries');
    const out = await db.client.send(new BatchWriteCommand({ RequestItems: { [db.table]: pending } }));
    pending = (out.UnprocessedItems?.[db.table] ?? []);
  }
}

/** BatchGetItem in groups of 100, in parallel, retrying unprocessed keys; items without pk/sk. */
/** Items by key, in any order; `withKeys` keeps their pk and sk (to tell which is which). */
async function batchGet(db: Db, itemKeys: ItemKey[], options: { consistent?: boolean; withKeys?: boolean } = {}): Promise<Record<string, unknown>[]> {
  const groups: ItemKey[][] = [];
  for (let i = 0; i < itemKeys.length; i += 100) groups.push(itemKeys.slice(i, i + 100));
  const found: Record<string, unknown>[] = [];
  await Promise.all(
    groups.map(async (group) => {
      let pending: Record<string, unknown>[] = group.map((k) => ({ ...k }));
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(500, 20 * 2 ** attempt)));
        const out = await db.client.send(
          new BatchGetCommand({ RequestItems: { [db.table]: { Keys: pending, ConsistentRead: options.consistent } } }),
        );
        for (const { pk, sk, ...item } of out.Responses?.[db.table] ?? []) found.push(options.withKeys ? { pk, sk, ...item } : item);
        pending = (out.UnprocessedKeys?.[db.table]?.Keys ?? []) as Record<string, unknown>[];
      }
    }),
  );
  return found;
}

export const putRequest = (item: Record<string, unknown>): WriteRequest => ({ PutRequest: { Item: item } });
export const deleteRequest = (key: ItemKey): WriteRequest => ({ DeleteRequest: { Key: { ...key } } });

/** Which sort keys of a partition a query reads: those with a prefix, or those before a key. */
export type SortKeyRange = { prefix: string } | { before: string } | { from: string; to: string };

function sortKeyCondition(range: SortKeyRange | undefined) {
  if (range === undefined) return { KeyConditionExpression: 'pk = :pk', values: {} };
  if ('prefix' in range) return { KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)', values: { ':sk': range.prefix } };
  if ('from' in range) return { KeyConditionExpression: 'pk = :pk AND sk BETWEEN :sk AND :to', values: { ':sk': range.from, ':to': range.to } };
  return { KeyConditionExpression: 'pk = :pk AND sk < :sk', values: { ':sk': range.before } };
}

/** Every item of a partition (optionally of a range of sort keys), following pagination. */
/** A filter a query applies after reading (it costs the reads of what it drops). */
export interface QueryFilter {
  expression: string;
  names?: Record<string, string>;
  values: Record<string, unknown>;
}

async function queryAll(db: Db, pk: string, range?: string | SortKeyRange, filter?: QueryFilter, options: { consistent?: boolean } = {}): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  const condition = sortKeyCondition(typeof range === 'string' ? { prefix: range } : range);
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db.client.send(
      new QueryCommand({
        TableName: db.table,
        KeyConditionExpression: condition.KeyConditionExpression,
        ExpressionAttributeValues: { ':pk': pk, ...condition.values, ...filter?.values },
        ...(filter ? { FilterExpression: filter.expression, ...(filter.names ? { ExpressionAttributeNames: filter.names } : {}) } : {}),
        ExclusiveStartKey: start,
        ...(options.consistent ? { ConsistentRead: true } : {}),
      }),
    );
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

/** The batch helpers bound to one DynamoDB handle. */
export function batchOps(db: Db) {
  return {
    batchWrite: (requests: WriteRequest[], concurrency?: number) => batchWrite(db, requests, concurrency),
    batchGet: (itemKeys: ItemKey[], options?: { consistent?: boolean; withKeys?: boolean }) => batchGet(db, itemKeys, options),
    queryAll: (pk: string, range?: string | SortKeyRange, filter?: QueryFilter, options?: { consistent?: boolean }) => queryAll(db, pk, range, filter, options),
  };
}

/**
 * One page of a partition for the API's cursor pagination: reads one item more than asked, so
 * `nextCursor` (null on the last page) is exact, not a guess.
 */
export async function readPage(
  db: Db,
  pk: string,
  page: { limit: number; cursor?: string },
  order: 'oldest-first' | 'newest-first',
  skPrefix?: string,
): Promise<{ items: Record<string, unknown>[]; nextCursor: string | null }> {
  const after = db.cursors.decode(pk, page.cursor);
  const out = await db.client.send(
    new QueryCommand({
      TableName: db.table,
      KeyConditionExpression: skPrefix === undefined ? 'pk = :pk' : 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': pk, ...(skPrefix === undefined ? {} : { ':prefix': skPrefix }) },
      ScanIndexForward: order === 'oldest-first',
      Limit: page.limit + 1,
      ExclusiveStartKey: after === undefined ? undefined : { pk, sk: after },
    }),
  );
  const items = out.Items ?? [];
  const more = items.length > page.limit;
  const shown = more ? items.slice(0, page.limit) : items;
  return { items: shown, nextCursor: more ? db.cursors.encode(pk, shown[shown.length - 1]) : null };
}
