import { GetCommand } from './dynamo-commands';
import { z } from 'zod';
import type { TenantScope } from '../tenancy';
import { batchOps, deleteRequest, readPage } from './batch';
import type { Db } from './db';
import { readItem } from './item-shape';
import { keys } from './keys';

/**
 * The cases of an evaluation dataset, one partition per dataset, in the order they were added:
 * each case's sort key is its position (numbered by the dataset record, which counts them), so
 * pages and runs read them in that order.
 */
const caseShape = z.lazy(() => z.object({
  id: z.string(),
  position: z.number(),
  input: z.union([z.string(), z.array(z.object({ role: z.string(), content: z.string() }))]),
  expected: z.record(z.string(), z.unknown()).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  context: z.object({ userId: z.string(), groups: z.array(z.string()).optional() }).optional(),
  createdAt: z.string(),
}));
export type EvalCaseRecord = z.infer<typeof caseShape>;

const positionKey = (position: number) => `C#${String(position).padStart(6, '0')}`;

export function evalCasesStore(db: Db) {
  const { batchWrite, queryAll } = batchOps(db);
  const read = (item: Record<string, unknown>) => readItem(caseShape, item, 'eval case');

  return {
    async putCases(scope: TenantScope, datasetId: string, cases: EvalCaseRecord[]): Promise<void> {
      const pk = keys.evalCasePartition(scope, datasetId);
      await batchWrite(cases.map((c) => ({ PutRequest: { Item: { pk, sk: positionKey(c.position), ...c } } })));
    },

    /** Oldest first, in pages. */
    async listCases(scope: TenantScope, datasetId: string, page: { limit: number; cursor?: string }) {
      const { items, nextCursor } = await readPage(db, keys.evalCasePartition(scope, datasetId), page, 'oldest-first');
      return { items: items.map(read), nextCursor };
    },

    async getCase(scope: TenantScope, datasetId: string, position: number): Promise<EvalCaseRecord | undefined> {
      const out = await db.client.send(new GetCommand({ TableName: db.table, Key: { pk: keys.evalCasePartition(scope, datasetId), sk: positionKey(position) } }));
      return out.Item ? read(out.Item) : undefined;
    },

    async allCases(scope: TenantScope, datasetId: string): Promise<EvalCaseRecord[]> {
      return (await queryAll(keys.evalCasePartition(scope, datasetId))).map(read);
    },

    async removeAll(scope: TenantScope, datasetId: string): Promise<void> {
      const pk = keys.evalCasePartition(scope, datasetId);
      await batchWrite((await queryAll(pk)).map((item) => deleteRequest({ pk, sk: String(item.sk) })));
    },
  };
}
