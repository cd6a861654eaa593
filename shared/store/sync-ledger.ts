import type { Clock } from '../clock';
import { GetCommand, UpdateCommand } from './dynamo-commands';
import type { TenantScope } from '../tenancy';
import type { Db } from './db';
import { keys } from './keys';
import { ifConditionHolds } from './conditional';

/**
 * The sync ledger of a knowledge source: one item per sync, recording who plans it (a lease),
 * its plan (batches, watermark, segment numbers) and which batches are done, so redelivered and
 * concurrent ingestion messages settle a sync exactly once.
 */
export interface SyncRecord {
  syncId: string;
  total: number;
  /** The segment numbers of the batches done (the current plan's are segBase … segBase + total − 1). */
  done: number[];
  startedAt: string;
  /** The database's clock when reading began: the next incremental sync reads rows changed after it. */
  watermark?: string;
  /** The first of the segment numbers reserved for its batches. */
  segBase: number;
  sent: boolean;
  /** While planning: when another delivery may take the planning over. */
  leaseUntil?: number;
}

export function syncLedgerStore(db: Db, clock: Clock) {

  /**
   * Claims the planning of a sync for one delivery of its message: true for the first claimant, or
   * for a redelivery after the claimant's lease ran out without sending the batches (it crashed);
   * false while another delivery holds the lease or once the batches are out.
   */
  async function claimSync(scope: TenantScope, sourceId: string, syncId: string, leaseMs: number): Promise<boolean> {
    const now = clock.now();
    const claimed = await ifConditionHolds(
      db.client.send(
        new UpdateCommand({
          TableName: db.table,
          Key: keys.sync(scope, sourceId, syncId),
          UpdateExpression: 'SET leaseUntil = :until, sent = :false, syncId = :syncId, expiresAt = :expires',
          ConditionExpression: 'attribute_not_exists(pk) OR (sent = :false AND leaseUntil < :now)',
          ExpressionAttributeValues: {
            ':until': now + leaseMs,
            ':now': now,
            ':false': false,
            ':syncId': syncId,
            ':expires': Math.floor(now / 1000) + 30 * 86400,
          },
        }),
      ),
    );
    return claimed !== undefined;
  }

  /** Extends the planning lease while planning runs; false once the batches are out. */
  async function renewSyncLease(scope: TenantScope, sourceId: string, syncId: string, leaseMs: number): Promise<boolean> {
    const renewed = await ifConditionHolds(
      db.client.send(
        new UpdateCommand({
          TableName: db.table,
          Key: keys.sync(scope, sourceId, syncId),
          UpdateExpression: 'SET leaseUntil = :until',
          ConditionExpression: 'sent = :false',
          ExpressionAttributeValues: { ':until': clock.now() + leaseMs, ':false': false },
        }),
      ),
    );
    return renewed !== undefined;
  }

  /** Records the plan of a claimed sync. */
  async function saveSyncPlan(scope: TenantScope, sourceId: string, plan: Pick<SyncRecord, 'syncId' | 'total' | 'startedAt' | 'watermark' | 'segBase'>): Promise<void> {
    await db.client.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.sync(scope, sourceId, plan.syncId),
        UpdateExpression: 'SET #total = :total, startedAt = :startedAt, segBase = :segBase' + (plan.watermark ? ', watermark = :watermark' : ''),
        ConditionExpression: 'sent = :false',
        ExpressionAttributeNames: { '#total': 'total' },
        ExpressionAttributeValues: {
          ':total': plan.total,
          ':startedAt': plan.startedAt,
          ':segBase': plan.segBase,
          ':false': false,
          ...(plan.watermark ? { ':watermark': plan.watermark } : {}),
        },
      }),
    );
  }

  async function getSync(scope: TenantScope, sourceId: string, syncId: string): Promise<SyncRecord | undefined> {
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.sync(scope, sourceId, syncId), ConsistentRead: true }));
    if (!out.Item) return undefined;
    const { done, ...rest } = out.Item as SyncRecord & { done?: Set<number> };
    return { ...(rest as SyncRecord), done: done ? [...done] : [] };
  }

  async function markSyncSent(scope: TenantScope, sourceId: string, syncId: string): Promise<void> {
    await db.client.send(
      new UpdateCommand({ TableName: db.table, Key: keys.sync(scope, sourceId, syncId), UpdateExpression: 'SET sent = :t', ExpressionAttributeValues: { ':t': true } }),
    );
  }

  /**
   * Adds a batch's segment to the sync's done set (a set: counting twice is impossible); returns
   * how many batches of the current plan are done. Segment numbers, not batch positions: a plan
   * redone after a crash numbers its batches from 0 again (over the documents still to index), and
   * must not count the first attempt's batches as its own.
   */
  async function markBatchDone(scope: TenantScope, sourceId: string, syncId: string, segNo: number): Promise<{ done: number; total: number }> {
    const out = await db.client.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.sync(scope, sourceId, syncId),
        UpdateExpression: 'ADD done :segNo',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':segNo': new Set([segNo]) },
        ReturnValues: 'ALL_NEW',
      }),
    );
    const done = (out.Attributes?.done as Set<number> | undefined) ?? new Set<number>();
    const total = Number(out.Attributes?.total);
    const segBase = Number(out.Attributes?.segBase);
    return { done: [...done].filter((n) => n >= segBase && n < segBase + total).length, total };
  }
  return { claimSync, renewSyncLease, saveSyncPlan, getSync, markSyncSent, markBatchDone };
}

export type SyncLedgerStore = ReturnType<typeof syncLedgerStore>;
