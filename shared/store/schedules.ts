import type { Clock } from '../clock';
import { BatchWriteCommand, PutCommand, QueryCommand, UpdateCommand } from './dynamo-commands';
import { ifConditionHolds } from './conditional';
import type { Db } from './db';
import { keys } from './keys';
import { readItems } from './item-shape';
import { z } from 'zod';

/**
 * Local mode's schedules (in AWS, EventBridge Scheduler holds them): one global item per workflow
 * schedule with its next time, and a marker per fired time so a schedule starts its workflow once.
 */
const scheduleShape = z.lazy(() => z.object({
  tenantId: z.string(),
  workflowId: z.string(),
  index: z.number(),
  cron: z.string(),
  timezone: z.string(),
  /** Epoch ms. */
  nextRunAt: z.number(),
}));
export type StoredSchedule = z.infer<typeof scheduleShape>;

const FIRED_DAYS = 3;

export function schedulesStore(db: Db, clock: Clock) {
  /** Replaces a workflow's schedules (indexes from `schedules.length` to `previous` are removed). */
  async function replace(tenantId: string, workflowId: string, schedules: StoredSchedule[], previous: number): Promise<void> {
    const stale = Array.from({ length: Math.max(0, previous) }, (_, i) => i).filter((i) => !schedules.some((s) => s.index === i));
    const requests = [
      ...schedules.map((s) => ({ PutRequest: { Item: { ...keys.schedule(tenantId, workflowId, s.index), ...s } } })),
      ...stale.map((i) => ({ DeleteRequest: { Key: keys.schedule(tenantId, workflowId, i) } })),
    ];
    for (let i = 0; i < requests.length; i += 25) await db.client.send(new BatchWriteCommand({ RequestItems: { [db.table]: requests.slice(i, i + 25) } }));
  }

  /** Schedules due at `now`. */
  async function due(now: number): Promise<StoredSchedule[]> {
    const items: StoredSchedule[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await db.client.send(
        new QueryCommand({ TableName: db.table, KeyConditionExpression: 'pk = :pk', FilterExpression: 'nextRunAt <= :now', ExpressionAttributeValues: { ':pk': keys.schedulePartition, ':now': now }, ExclusiveStartKey: start }),
      );
      items.push(...readItems(scheduleShape, out.Items, 'schedule'));
      start = out.LastEvaluatedKey;
    } while (start);
    return items;
  }

  /** Moves a due schedule to its next time, if no one else did; undefined `next`: it never runs again. */
  async function advance(schedule: StoredSchedule, next: number | undefined): Promise<boolean> {
    const out = await ifConditionHolds(
      db.client.send(
        new UpdateCommand({
          TableName: db.table,
          Key: keys.schedule(schedule.tenantId, schedule.workflowId, schedule.index),
          UpdateExpression: 'SET nextRunAt = :next',
          ConditionExpression: 'nextRunAt = :was',
          ExpressionAttributeValues: { ':next': next ?? Number.MAX_SAFE_INTEGER, ':was': schedule.nextRunAt },
        }),
      ),
    );
    return out !== undefined;
  }

  /** Marks a scheduled time as started; false when it already was (a duplicate message). */
  async function markFired(tenantId: string, workflowId: string, index: number, at: string): Promise<boolean> {
    const out = await ifConditionHolds(
      db.client.send(
        new PutCommand({
          TableName: db.table,
          Item: { ...keys.scheduleFired(tenantId, workflowId, index, at), expiresAt: Math.floor(clock.now() / 1000) + FIRED_DAYS * 86_400 },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
    return out !== undefined;
  }

  return { replace, due, advance, markFired };
}
