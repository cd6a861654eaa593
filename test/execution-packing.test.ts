import { describe, expect, it } from 'vitest';
import { newId } from '../shared/ids';
import { TABLES } from '../shared/platform/logical-tables';
import { GetCommand, UpdateCommand } from '../shared/store/dynamo-commands';
import { keys } from '../shared/store/keys';
import type { ExecutionRecord } from '../shared/store/executions';
import { newTenant } from './helpers/tenant';
import { testRt } from './helpers/runtime';

/** A running execution of the given steps (each `pending`), defined as `definition` says. */
function execution(steps: string[], definition: ExecutionRecord['definition']): ExecutionRecord {
  const now = new Date().toISOString();
  return {
    id: newId('execution', Date.now()),
    workflowId: newId('workflow', Date.now()),
    workflowVersion: 'draft',
    status: 'running',
    input: 'my parcel arrived damaged',
    parameters: {},
    steps: Object.fromEntries(steps.map((id) => [id, { id, type: 'generation', status: 'pending' as const, attempt: 0 }])),
    definition,
    usage: { inputTokens: 0, outputTokens: 0 },
    createdAt: now,
    startedAt: now,
  };
}

/** An execution's large values are stored gzipped (every update rewrites, and is billed for, the whole item). */
describe('execution items', () => {
  const { executions, db } = testRt.store;
  const raw = async (scope: Awaited<ReturnType<typeof newTenant>>['scope'], e: { workflowId: string; id: string }) =>
    (await db.client.send(new GetCommand({ TableName: db.table, Key: keys.execution(scope, e.workflowId, e.id), ConsistentRead: true }))).Item!;

  it('keep large outputs and the definition packed, small ones as they are, and read both back unchanged', async () => {
    const { scope } = await newTenant();
    const now = new Date().toISOString();
    const passages = Array.from({ length: 20 }, (_, i) => ({ title: `Refunds ${i}`, text: 'A damaged parcel is refunded within five business days of its return. '.repeat(3) }));
    const record = execution(['search', 'label'], [
      { id: 'search', type: 'search', dependsOn: [], query: '{{input}}', notes: 'n'.repeat(600) },
      { id: 'label', type: 'classification', dependsOn: [] },
    ]);
    await executions.createExecution(scope, record);
    for (const [stepId, output] of [['search', { passages }], ['label', { category: 'refund' }]] as const) {
      const claimed = await executions.claimStep(scope, record, stepId, 60_000);
      await executions.settleStep(scope, record, stepId, claimed!.steps[stepId]!.attempt, { status: 'succeeded', output, startedAt: now });
    }
    const finished = await executions.finishExecution(scope, record, { status: 'succeeded', output: { passages } });

    const item = await raw(scope, record);
    const steps = item.steps as Record<string, { output: unknown }>;
    expect(steps.search!.output).toBeInstanceOf(Uint8Array);
    expect((steps.search!.output as Uint8Array).byteLength).toBeLessThan(JSON.stringify({ passages }).length / 4);
    expect(item.output).toBeInstanceOf(Uint8Array);
    expect(item.definition).toBeInstanceOf(Uint8Array);
    expect(steps.label!.output).toEqual({ category: 'refund' });

    const read = await executions.getExecution(scope, record.workflowId, record.id);
    expect(read!.steps.search!.output).toEqual({ passages });
    expect(read!.steps.label!.output).toEqual({ category: 'refund' });
    expect(read!.output).toEqual({ passages });
    expect(read!.definition).toEqual(record.definition);
    expect(finished!.output).toEqual({ passages });
    // The platform's db/ops rows show outputs as the executions API does.
    expect(TABLES.get('workflow_executions')!.toRow(item)).toMatchObject({ output: { passages }, steps: { search: { output: { passages } } } });
  });

  it('read an item written before packing as it was', async () => {
    const { scope } = await newTenant();
    const big = { text: 'x'.repeat(2000) };
    const record = execution(['a'], [{ id: 'a', type: 'generation', dependsOn: [] }]);
    await executions.createExecution(scope, record);
    // As an earlier version wrote it: the output in the item as plain attributes.
    await db.client.send(
      new UpdateCommand({ TableName: db.table, Key: keys.execution(scope, record.workflowId, record.id), UpdateExpression: 'SET steps.a.#o = :o, #o = :o', ExpressionAttributeNames: { '#o': 'output' }, ExpressionAttributeValues: { ':o': big } }),
    );
    const read = await executions.getExecution(scope, record.workflowId, record.id);
    expect(read!.steps.a!.output).toEqual(big);
    expect(read!.output).toEqual(big);
  });
});
