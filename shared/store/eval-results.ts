import { GetCommand, PutCommand, TransactionCanceledException, TransactWriteCommand } from './dynamo-commands';
import { z } from 'zod';
import type { TenantScope } from '../tenancy';
import { batchOps, deleteRequest, readPage } from './batch';
import type { Db } from './db';
import { readItem } from './item-shape';
import { keys } from './keys';

/**
 * An evaluation run's results and progress, one partition per run: a `PROGRESS` item (cases done
 * of the total) and one `R#<position>` item a case. A result and the count of it are one
 * transaction, so a case delivered twice is counted once and a crash between them loses nothing.
 */
const resultShape = z.lazy(() => z.object({
  position: z.number(),
  caseId: z.string(),
  input: z.unknown(),
  expected: z.record(z.string(), z.unknown()).optional(),
  output: z.string(),
  scores: z.record(z.string(), z.number().nullable()),
  detail: z.record(z.string(), z.record(z.string(), z.number())).optional(),
  skipped: z.record(z.string(), z.string()).optional(),
  passed: z.boolean(),
  requestId: z.string(),
  latencyMs: z.number(),
  usage: z.object({ inputTokens: z.number(), outputTokens: z.number() }),
  costUsd: z.number().nullable(),
  model: z.string().optional(),
  targetVersion: z.union([z.number(), z.literal('draft')]).optional(),
  error: z.string().optional(),
  /** Something done otherwise than the case asked (its end user not used), and why. */
  note: z.string().optional(),
  /** The llm_judge scorer's grading: why, by which model, at what cost (apart from the target's). */
  judge: z.object({ reasoning: z.string().optional(), model: z.string(), usage: z.object({ inputTokens: z.number(), outputTokens: z.number() }), costUsd: z.number().nullable() }).optional(),
  finishedAt: z.string(),
}));
export type EvalResultRecord = z.infer<typeof resultShape>;
const progressShape = z.lazy(() => z.object({ total: z.number(), done: z.number() }));
export type EvalProgress = z.infer<typeof progressShape>;

const PROGRESS = 'PROGRESS';
const resultKey = (position: number) => `R#${String(position).padStart(6, '0')}`;

export function evalResultsStore(db: Db) {
  const { batchGet, batchWrite, queryAll } = batchOps(db);
  const read = (item: Record<string, unknown>) => readItem(resultShape, item, 'eval result');
  const progressKey = (scope: TenantScope, runId: string) => ({ pk: keys.evalResultPartition(scope, runId), sk: PROGRESS });

  return {
    async start(scope: TenantScope, runId: string, total: number): Promise<void> {
      await db.client.send(new PutCommand({ TableName: db.table, Item: { ...progressKey(scope, runId), total, done: 0 }, ConditionExpression: 'attribute_not_exists(pk)' }));
    },

    /** Several runs' progress in one batch read (a listed page of runs), by run id. */
    async progressOf(scope: TenantScope, runIds: string[]): Promise<Map<string, EvalProgress>> {
      if (runIds.length === 0) return new Map();
      const items = await batchGet(runIds.map((id) => progressKey(scope, id)), { withKeys: true });
      const byPk = new Map(runIds.map((id) => [keys.evalResultPartition(scope, id), id]));
      return new Map(items.map((item) => [byPk.get(String(item.pk))!, readItem(progressShape, item, 'eval progress')]));
    },

    async progress(scope: TenantScope, runId: string): Promise<EvalProgress | undefined> {
      const out = await db.client.send(new GetCommand({ TableName: db.table, Key: progressKey(scope, runId), ConsistentRead: true }));
      return out.Item ? readItem(progressShape, out.Item, 'eval progress') : undefined;
    },

    /** Stores a case's result and counts it, once: false when it was already recorded (a repeated delivery). */
    async record(scope: TenantScope, runId: string, result: EvalResultRecord): Promise<boolean> {
      const pk = keys.evalResultPartition(scope, runId);
      try {
        await db.client.send(
          new TransactWriteCommand({
            TransactItems: [
              { Put: { TableName: db.table, Item: { pk, sk: resultKey(result.position), ...result }, ConditionExpression: 'attribute_not_exists(pk)' } },
              { Update: { TableName: db.table, Key: { pk, sk: PROGRESS }, UpdateExpression: 'ADD done :one', ExpressionAttributeValues: { ':one': 1 } } },
            ],
          }),
        );
        return true;
      } catch (error) {
        if (error instanceof TransactionCanceledException && error.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed') return false;
        throw error;
      }
    },

    async has(scope: TenantScope, runId: string, position: number): Promise<boolean> {
      const out = await db.client.send(new GetCommand({ TableName: db.table, Key: { pk: keys.evalResultPartition(scope, runId), sk: resultKey(position) }, ProjectionExpression: 'pk' }));
      return out.Item !== undefined;
    },

    /** In case order, in pages. */
    async listResults(scope: TenantScope, runId: string, page: { limit: number; cursor?: string }) {
      const { items, nextCursor } = await readPage(db, keys.evalResultPartition(scope, runId), page, 'oldest-first', 'R#');
      return { items: items.map(read), nextCursor };
    },

    async allResults(scope: TenantScope, runId: string): Promise<EvalResultRecord[]> {
      return (await queryAll(keys.evalResultPartition(scope, runId), 'R#')).map(read);
    },

    async removeAll(scope: TenantScope, runId: string): Promise<void> {
      const pk = keys.evalResultPartition(scope, runId);
      await batchWrite((await queryAll(pk)).map((item) => deleteRequest({ pk, sk: String(item.sk) })));
    },
  };
}
