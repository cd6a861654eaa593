import type { Clock } from '../clock';
import { GetCommand, QueryCommand, UpdateCommand } from './dynamo-commands';
import type { TenantScope } from '../tenancy';
import { batchOps, putRequest } from './batch';
import { ifConditionHolds } from './conditional';
import { claimLeased } from './leased-claim';
import type { Db } from './db';
import { keys } from './keys';
import { readItem } from './item-shape';
import { z } from 'zod';

/**
 * The items of `map` steps: one DynamoDB item each (an execution record could not hold a thousand
 * outputs), claimed and settled with conditional writes like steps, so a duplicate or late message
 * runs an item once.
 */
const mapItemShape = z.lazy(() => z.object({
  index: z.number(),
  value: z.unknown(),
  status: z.enum(['pending', 'running', 'retrying', 'succeeded', 'failed']),
  attempt: z.number(),
  leaseUntil: z.number().optional(),
  output: z.unknown().optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
}));
export type MapItem = z.infer<typeof mapItemShape>;
export type MapItemStatus = MapItem['status'];
const strip = (item: Record<string, unknown>) => readItem(mapItemShape, item, 'map item');

export function mapItemsStore(db: Db, clock: Clock) {
  const batch = batchOps(db);
  const key = (scope: TenantScope, executionId: string, stepId: string, index: number) => keys.mapItem(scope, executionId, stepId, index);

  /** Stores a map's items as pending (again, if a crashed attempt stored them: none had started). */
  async function putItems(scope: TenantScope, executionId: string, stepId: string, values: unknown[]): Promise<void> {
    await batch.batchWrite(values.map((value, index) => putRequest({ ...key(scope, executionId, stepId, index), index, value, status: 'pending', attempt: 0 })));
  }

  async function getItem(scope: TenantScope, executionId: string, stepId: string, index: number): Promise<MapItem | undefined> {
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: key(scope, executionId, stepId, index), ConsistentRead: true }));
    return out.Item ? strip(out.Item) : undefined;
  }

  /** Every item, in order. */
  async function listItems(scope: TenantScope, executionId: string, stepId: string): Promise<MapItem[]> {
    const items: MapItem[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await db.client.send(
        new QueryCommand({ TableName: db.table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.mapItemPartition(scope, executionId, stepId) }, ConsistentRead: true, ExclusiveStartKey: start }),
      );
      items.push(...(out.Items ?? []).map(strip));
      start = out.LastEvaluatedKey;
    } while (start);
    return items;
  }

  /** Takes an item to run (pending, retrying, or running on a lease that ran out); undefined when someone else has it or it is settled. */
  async function claimItem(scope: TenantScope, executionId: string, stepId: string, index: number, leaseMs: number): Promise<MapItem | undefined> {
    const claimed = await claimLeased(db, key(scope, executionId, stepId, index), 'running', leaseMs, clock.now());
    return claimed && strip(claimed);
  }

  async function renewItemLease(scope: TenantScope, executionId: string, stepId: string, index: number, attempt: number, leaseMs: number): Promise<boolean> {
    const out = await ifConditionHolds(
      db.client.send(
        new UpdateCommand({
          TableName: db.table,
          Key: key(scope, executionId, stepId, index),
          UpdateExpression: 'SET leaseUntil = :until',
          ConditionExpression: '#st = :running AND attempt = :attempt',
          ExpressionAttributeNames: { '#st': 'status' },
          ExpressionAttributeValues: { ':until': clock.now() + leaseMs, ':running': 'running', ':attempt': attempt },
        }),
      ),
    );
    return out !== undefined;
  }

  /** Ends the attempt that claimed the item (only that one); false when it no longer held it. */
  async function settleItem(scope: TenantScope, executionId: string, stepId: string, index: number, attempt: number, result: { status: 'succeeded' | 'failed' | 'retrying'; output?: unknown; error?: { code: string; message: string } }): Promise<boolean> {
    const out = await ifConditionHolds(
      db.client.send(
        new UpdateCommand({
          TableName: db.table,
          Key: key(scope, executionId, stepId, index),
          UpdateExpression: `SET #st = :status${result.output !== undefined ? ', #output = :output' : ''}${result.error ? ', #error = :error' : ''} REMOVE leaseUntil`,
          ConditionExpression: '#st = :running AND attempt = :attempt',
          ExpressionAttributeNames: { '#st': 'status', ...(result.output !== undefined ? { '#output': 'output' } : {}), ...(result.error ? { '#error': 'error' } : {}) },
          ExpressionAttributeValues: { ':status': result.status, ':running': 'running', ':attempt': attempt, ...(result.output !== undefined ? { ':output': result.output } : {}), ...(result.error ? { ':error': result.error } : {}) },
        }),
      ),
    );
    return out !== undefined;
  }

  return { putItems, getItem, listItems, claimItem, renewItemLease, settleItem };
}

export type MapItemsStore = ReturnType<typeof mapItemsStore>;
