import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { handleIngestionMessage } from '../shared/knowledge/ingestion';
import { knowledgeSources, startSync } from '../shared/knowledge/sources';
import { startExecution } from '../shared/workflows/executions';
import { handleStepMessage } from '../shared/workflows/execution';
import { MAX_REDRIVES, sweep } from '../shared/work-sweeper';
import type { Queue } from '../shared/queue/queue';
import type { Runtime } from '../shared/runtime';
import { call } from './helpers/http';
import { testLocal, testRt } from './helpers/runtime';
import { localRuntime } from '../local/local-runtime';
import { createDb } from '../shared/store/db';
import { randomBytes } from 'node:crypto';
import { newTenant, type TestTenant } from './helpers/tenant';

/**
 * Work whose messages were lost: a runtime whose queues accept messages and drop them stands for
 * a process that died between saving the work and sending it.
 */
const dropping: Queue<never> = { send: async () => {}, pending: async () => 0 };
const lossy: Runtime = { ...testRt, queues: { ingestion: dropping, workflowSteps: dropping, webhooks: dropping } };
const app = createLocalApp(testRt);

describe('the sweeper', () => {
  let t: TestTenant;
  let workflowId: string;
  const only = () => ({ afterMs: 0, tenantId: t.scope.tenantId });
  beforeAll(async () => {
    t = await newTenant();
    const created = await call(app, 'POST', '/v1/workflows', {
      key: t.apiKey,
      body: { name: 'two steps', steps: [{ type: 'generation', config: { model: 'gpt-4', prompt: 'Say hello to {{user_message}}' } }, { type: 'generation', config: { model: 'gpt-4', prompt: 'Again: {{user_message}}' } }] },
    });
    workflowId = created.body.data.id;
  });

  it('leaves work alone while it progresses, then re-drives an execution whose step message was lost', async () => {
    const execution = await startExecution(lossy, t.scope, workflowId, { input: 'Ada', parameters: {} });
    const late = await sweep(testRt, { tenantId: t.scope.tenantId }); // default: 15 minutes without progress
    expect(late.outcomes).toMatchObject({ progressing: 1, redriven: 0 });
    expect((await sweep(testRt, { tenantId: t.scope.tenantId })).outcomes).toMatchObject({ waiting: 1, redriven: 0 });
    expect((await sweep(testRt, only())).outcomes).toMatchObject({ redriven: 1 });
    await testLocal.workflowSteps!.drain();
    const done = await testRt.store.executions.getExecution(t.scope, workflowId, execution.id);
    expect(done?.status).toBe('succeeded');
    expect(Object.values(done!.steps).map((s) => s.status)).toEqual(['succeeded', 'succeeded']);
    // Finished work leaves the list.
    expect((await sweep(testRt, only())).checked).toBe(0);
  });

  it(`fails an execution after ${MAX_REDRIVES} re-drives that changed nothing, with a reason`, async () => {
    const execution = await startExecution(lossy, t.scope, workflowId, { input: 'Bob', parameters: {} });
    const outcomes = [];
    for (let i = 0; i < MAX_REDRIVES + 2; i++) outcomes.push(Object.entries((await sweep(lossy, only())).outcomes).find(([, n]) => n > 0)![0]);
    expect(outcomes).toEqual(['progressing', ...Array(MAX_REDRIVES).fill('redriven'), 'failed']);
    const failed = await testRt.store.executions.getExecution(t.scope, workflowId, execution.id);
    expect(failed?.status).toBe('failed');
    expect(failed?.error?.message).toMatch(/stopped making progress/);
  });

  it('does not fail work queued behind a backlog longer than its window: a queue that still holds messages is no evidence of loss', async () => {
    // A process whose steps queue holds the execution's message, its workers not yet running.
    const behind = localRuntime({ db: createDb(), secretsKey: randomBytes(32), queueNamespace: randomBytes(6).toString('hex') });
    const execution = await startExecution(behind.rt, t.scope, workflowId, { input: 'Cy', parameters: {} });
    expect(await behind.rt.queues.workflowSteps.pending()).toBeGreaterThan(0);
    const outcomes = [];
    for (let i = 0; i < MAX_REDRIVES + 3; i++) outcomes.push(Object.entries((await sweep(behind.rt, only())).outcomes).find(([, n]) => n > 0)![0]);
    expect(outcomes).toEqual(['progressing', ...Array(MAX_REDRIVES + 2).fill('waiting')]);
    expect((await testRt.store.executions.getExecution(t.scope, workflowId, execution.id))?.status).toBe('running');
    // The backlog drains: the execution finishes from its own message, never re-driven.
    await behind.start();
    await behind.workflowSteps!.drain();
    await behind.stop();
    expect((await testRt.store.executions.getExecution(t.scope, workflowId, execution.id))?.status).toBe('succeeded');
  });

  it('re-drives the items of a map whose item messages were lost, and the map is collected', async () => {
    const created = await call(app, 'POST', '/v1/workflows', {
      key: t.apiKey,
      body: { name: 'map', steps: [{ id: 'each', type: 'map', items: '[1, 2, 3]', concurrency: 2, steps: [{ id: 'triple', type: 'transform', expression: 'item * 3' }] }] },
    });
    const mapWorkflow = created.body.data.id as string;
    const execution = await startExecution(lossy, t.scope, mapWorkflow, { input: '', parameters: {} });
    // The map step runs; the messages of its items are lost.
    await handleStepMessage(lossy, { type: 'step', tenantId: t.scope.tenantId, workflowId: mapWorkflow, executionId: execution.id, stepId: 'each' }, { receiveCount: 1, maxReceives: 5 });
    const started = await testRt.store.executions.getExecution(t.scope, mapWorkflow, execution.id);
    expect(started?.steps.each).toMatchObject({ status: 'running', map: { total: 3, started: 2, done: 0 } });
    expect((await sweep(testRt, only())).outcomes).toMatchObject({ progressing: 1 });
    expect((await sweep(testRt, only())).outcomes).toMatchObject({ redriven: 1 });
    await testLocal.workflowSteps!.drain();
    const done = await testRt.store.executions.getExecution(t.scope, mapWorkflow, execution.id);
    expect(done?.status).toBe('succeeded');
    expect(done?.output).toEqual({ results: [3, 6, 9], errors: [] });
  });

  it('re-drives a sync whose message was lost, and the source ends ready', async () => {
    const created = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'kb', type: 'file-collection', files: [{ path: 'a.md', content: '# Returns\n\nWithin 30 days.' }] } });
    const sourceId = created.body.data.id as string;
    await startSync(lossy, t.scope, sourceId);
    expect((await knowledgeSources.find(testRt, t.scope, sourceId))?.status).toBe('pending');
    await sweep(testRt, only());
    expect((await sweep(testRt, only())).outcomes).toMatchObject({ redriven: 1 });
    await testLocal.ingestion!.drain();
    const source = await call(app, 'GET', `/v1/knowledge-sources/${sourceId}`, { key: t.apiKey });
    expect(source.body.data).toMatchObject({ status: 'ready', stats: { documents: 1 } });
    expect((await sweep(testRt, only())).checked).toBe(0);
  });

  it('re-plans a sync whose batches were lost as a new sync, and the source ends ready', async () => {
    const created = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'kb2', type: 'file-collection', files: [{ path: 'b.md', content: '# Shipping\n\nThree days.' }] } });
    const sourceId = created.body.data.id as string;
    const { syncId } = await startSync(lossy, t.scope, sourceId);
    // Planning runs and sends its batches, which are lost.
    await handleIngestionMessage(lossy, { type: 'sync', tenantId: t.scope.tenantId, sourceId, syncId: syncId! }, { receiveCount: 1, maxReceives: 5 });
    expect((await knowledgeSources.find(testRt, t.scope, sourceId))?.status).toBe('indexing');
    await sweep(testRt, only());
    expect((await sweep(testRt, only())).outcomes).toMatchObject({ redriven: 1 });
    await testLocal.ingestion!.drain();
    const source = await call(app, 'GET', `/v1/knowledge-sources/${sourceId}`, { key: t.apiKey });
    expect(source.body.data).toMatchObject({ status: 'ready', stats: { documents: 1 } });
    expect((await knowledgeSources.find(testRt, t.scope, sourceId))?.syncId).not.toBe(syncId);
  });

  it(`fails a sync after ${MAX_REDRIVES} re-drives that changed nothing, with a reason`, async () => {
    const created = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'kb3', type: 'file-collection', files: [{ path: 'c.md', content: '# Hours\n\nNine to five.' }] } });
    const sourceId = created.body.data.id as string;
    await startSync(lossy, t.scope, sourceId);
    const outcomes = [];
    for (let i = 0; i < MAX_REDRIVES + 2; i++) outcomes.push(Object.entries((await sweep(lossy, only())).outcomes).find(([, n]) => n > 0)![0]);
    expect(outcomes).toEqual(['progressing', ...Array(MAX_REDRIVES).fill('redriven'), 'failed']);
    const source = await call(app, 'GET', `/v1/knowledge-sources/${sourceId}`, { key: t.apiKey });
    expect(source.body.data.status).toBe('failed');
    expect(source.body.data.error.message).toMatch(/stopped making progress/);
  });

  it('runs as a Lambda on a scheduled EventBridge event', async () => {
    const { handler } = await import('../functions/sweeper/handler');
    const execution = await startExecution(lossy, t.scope, workflowId, { input: 'Eve', parameters: {} });
    const event = { version: '0', id: 'e1', 'detail-type': 'Scheduled Event' as const, source: 'aws.events', account: '123456789012', time: new Date().toISOString(), region: 'us-east-1', resources: ['arn:aws:events:us-east-1:123456789012:rule/SweepSchedule'], detail: {} };
    await handler(event);
    // The handler saw the new execution (first sight: its state is now the one to compare with).
    const entry = (await testRt.store.unfinishedWork.list()).find((w) => w.id === execution.id);
    expect(entry?.seen).toBeDefined();
  });
});
