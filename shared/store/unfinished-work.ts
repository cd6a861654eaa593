import { DeleteCommand, PutCommand } from './dynamo-commands';
import type { Db } from './db';
import { batchOps } from './batch';
import { keys } from './keys';
import { ifConditionHolds } from './conditional';

/**
 * Executions, syncs and background runs in progress, across tenants, for the sweeper: registered before their
 * first message is sent and removed when they finish. An entry left behind by a crash is harmless
 * (the sweeper finds the work finished and removes it); work without an entry cannot exist.
 */
export type UnfinishedWork =
  | { kind: 'execution'; tenantId: string; id: string; workflowId: string; seen?: string; seenAt: number; redrives: number }
  | { kind: 'sync'; tenantId: string; id: string; syncId: string; seen?: string; seenAt: number; redrives: number }
  | { kind: 'run'; tenantId: string; id: string; agentId: string; seen?: string; seenAt: number; redrives: number };

export function unfinishedWorkStore(db: Db) {
  const ops = batchOps(db);

  /** Registers (or replaces: a new sync of the same source) an entry. */
  async function put(work: UnfinishedWork): Promise<void> {
    await db.client.send(new PutCommand({ TableName: db.table, Item: { ...keys.unfinished(work.tenantId, work.kind, work.id), ...work } }));
  }

  /** Removes an entry; for a sync, only the entry of that sync (a newer one keeps its own). */
  async function remove(work: Pick<UnfinishedWork, 'kind' | 'tenantId' | 'id'> & { syncId?: string }): Promise<void> {
    await ifConditionHolds(
      db.client.send(
        new DeleteCommand({
          TableName: db.table,
          Key: keys.unfinished(work.tenantId, work.kind, work.id),
          ...(work.syncId ? { ConditionExpression: 'syncId = :syncId', ExpressionAttributeValues: { ':syncId': work.syncId } } : {}),
        }),
      ),
    );
  }

  async function list(): Promise<UnfinishedWork[]> {
    const parts = await Promise.all(keys.unfinishedPartitions.map((pk) => ops.queryAll(pk)));
    return parts.flat().map(({ pk: _pk, sk: _sk, ...work }) => work as UnfinishedWork);
  }

  return { put, remove, list };
}

export type UnfinishedWorkStore = ReturnType<typeof unfinishedWorkStore>;
