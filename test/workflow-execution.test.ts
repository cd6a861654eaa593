import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { consumeStepMessage, handleStepMessage } from '../shared/workflows/execution';
import { localEngine } from '../shared/models/local-engine';
import { providerError } from '../shared/models/provider-error';
import { MAX_RECEIVES } from '../shared/queue/queue';
import type { StepMessage } from '../shared/queue/messages';
import type { Runtime } from '../shared/runtime';
import { call } from './helpers/http';
import { newTenant, type TestTenant } from './helpers/tenant';
import { runtimeLater, testRt, testLocal } from './helpers/runtime';

const app = createLocalApp(testRt);
const files = [
  { path: 'policies/returns.md', content: '# Returns\n\nItems can be returned within 30 days of delivery.' },
  { path: 'billing.md', content: '# Billing\n\nDouble charges are refunded within 5 business days.' },
];

describe('workflow execution (local queue)', () => {
  let t: TestTenant;
  let ks: string;
  beforeAll(async () => {
    t = await newTenant();
    ks = (await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'kb', type: 'file-collection', files } })).body.data.id;
    await call(app, 'POST', `/v1/knowledge-sources/${ks}/connect`, { key: t.apiKey, body: {} });
    await testLocal.ingestion!.drain();
  });

  const create = async (body: unknown) => {
    const res = await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  };
  const execute = (id: string, body: unknown) => call(app, 'POST', `/v1/workflows/${id}/execute`, { key: t.apiKey, body });

  it('runs the seed workflow offline: classification → search → generation grounded in the passages', async () => {
    const id = await create({
      name: 'Customer support flow',
      steps: [
        { type: 'classification', config: { model: 'gpt-4', categories: ['billing', 'returns', 'other'] } },
        { type: 'search', knowledgeSourceId: ks, query: '{{user_message}}' },
        { type: 'generation', config: { model: 'gpt-4', prompt: 'Answer the customer: {{user_message}}' } },
      ],
    });
    const res = await execute(id, { input: 'How many days do I have to return an item?' });
    expect(res.status).toBe(200);
    const exe = res.body.data;
    expect(exe).toMatchObject({ workflowId: id, workflowVersion: 'draft', status: 'succeeded', input: 'How many days do I have to return an item?' });
    expect(exe.id).toMatch(/^exe_/);
    expect(exe.steps.map((s: { id: string; status: string; attempt: number }) => [s.id, s.status, s.attempt])).toEqual([
      ['step1', 'succeeded', 1],
      ['step2', 'succeeded', 1],
      ['step3', 'succeeded', 1],
    ]);
    expect(exe.steps[0].output.category).toBe('returns');
    expect(exe.steps[1].output.results[0].path).toBe('policies/returns.md');
    expect(exe.steps[1].output.context).toContain('returned within 30 days');
    // The prompt never placed {{context}}: the generation is grounded all the same.
    expect(exe.output.text).toContain('Items can be returned within 30 days of delivery.');
    expect(exe.usage.outputTokens).toBeGreaterThan(0);
    expect(exe.finishedAt >= exe.startedAt).toBe(true);
    for (const s of exe.steps) expect(s.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('routes two inputs to different branches, and joins them', async () => {
    const id = await create({
      name: 'router',
      steps: [
        { id: 'route', type: 'classification', model: 'local/lexical', categories: [{ name: 'billing', description: 'charges invoices payments refunds' }, { name: 'shipping', description: 'delivery parcels tracking' }] },
        { id: 'billing', type: 'generation', model: 'gpt-4', prompt: 'billing: {{input}}', dependsOn: ['route'], when: { step: 'route', category: 'billing' } },
        { id: 'shipping', type: 'generation', model: 'gpt-4', prompt: 'shipping: {{input}}', dependsOn: ['route'], when: { step: 'route', category: 'shipping' } },
        { id: 'done', type: 'generation', model: 'gpt-4', prompt: 'Routed to {{category}}. {{parameters.sign}}', dependsOn: ['billing', 'shipping'] },
      ],
    });
    const billing = (await execute(id, { input: 'I was charged twice on my invoice', parameters: { sign: 'Bye' } })).body.data;
    const shipping = (await execute(id, { input: 'My parcel tracking has not moved', parameters: { sign: 'Bye' } })).body.data;
    const statuses = (e: { steps: Array<{ id: string; status: string }> }) => Object.fromEntries(e.steps.map((s) => [s.id, s.status]));
    expect(statuses(billing)).toEqual({ route: 'succeeded', billing: 'succeeded', shipping: 'skipped', done: 'succeeded' });
    expect(statuses(shipping)).toEqual({ route: 'succeeded', billing: 'skipped', shipping: 'succeeded', done: 'succeeded' });
    expect(billing.status).toBe('succeeded');
  });

  it('treats substituted text as data: a template in the input is not expanded', async () => {
    const id = await create({ name: 'echo', steps: [{ type: 'generation', model: 'gpt-4', prompt: 'Echo {{input}} / {{parameters.lang}}' }] });
    const spy = vi.spyOn(localEngine, 'generate');
    try {
      await execute(id, { input: 'literally {{parameters.secret}}', parameters: { lang: 'fr', secret: 's3cr3t' } });
      const prompt = spy.mock.calls[0]![0].messages[0]!.content;
      expect(prompt).toBe('Echo literally {{parameters.secret}} / fr');
    } finally {
      spy.mockRestore();
    }
  });

  it('answers 202 with Location in async mode; lists and filters executions; pins the definition', async () => {
    const id = await create({ name: 'one', steps: [{ type: 'generation', model: 'gpt-4', prompt: 'Hi {{input}}' }] });
    const res = await execute(id, { input: 'there', mode: 'async' });
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe(`/v1/workflows/${id}/executions/${res.body.data.id}`);
    await testLocal.workflowSteps!.drain();
    const got = await call(app, 'GET', res.headers.get('location')!, { key: t.apiKey });
    expect(got.body.data.status).toBe('succeeded');
    await call(app, 'PUT', `/v1/workflows/${id}`, { key: t.apiKey, body: { name: 'one', steps: [{ type: 'generation', model: 'gpt-4', prompt: 'Changed' }, { type: 'generation', model: 'gpt-4', prompt: 'x' }] } });
    const again = await call(app, 'GET', res.headers.get('location')!, { key: t.apiKey });
    expect(again.body.data.steps).toHaveLength(1);
    expect(again.body.data.workflowVersion).toBe('draft');
    await execute(id, { input: 'x' });
    const list = await call(app, 'GET', `/v1/workflows/${id}/executions?status=succeeded&limit=1`, { key: t.apiKey });
    expect(list.body.data).toHaveLength(1);
    // The next execution ran the draft as it is now: both steps.
    expect(list.body.data[0].workflowVersion).toBe('draft');
    expect(list.body.data[0].steps).toHaveLength(2);
    expect(list.body.meta.pagination.hasMore).toBe(true);
    expect((await call(app, 'GET', `/v1/workflows/${id}/executions?status=failed`, { key: t.apiKey })).body.data).toEqual([]);
    expect((await call(app, 'GET', `/v1/workflows/${id}/executions/exe_01m7y62dvspbq7k3p58zfb7w0n`, { key: t.apiKey })).status).toBe(404);
  });

  it('retries a transient provider failure with backoff, then succeeds', async () => {
    const id = await create({ name: 'flaky', steps: [{ type: 'generation', model: 'gpt-4', prompt: 'Hi {{input}}' }] });
    const spy = vi.spyOn(localEngine, 'generate').mockRejectedValueOnce(providerError('openai', 503));
    try {
      const res = await execute(id, { input: 'there' });
      expect(res.body.data.status).toBe('succeeded');
      expect(res.body.data.steps[0]).toMatchObject({ status: 'succeeded', attempt: 2 });
    } finally {
      spy.mockRestore();
    }
  });

  it('fails the step and the execution after the last attempt, with the error', async () => {
    const id = await create({ name: 'down', steps: [{ type: 'generation', model: 'gpt-4', prompt: 'Hi' }, { type: 'generation', model: 'gpt-4', prompt: 'never' }] });
    const spy = vi.spyOn(localEngine, 'generate').mockRejectedValue(providerError('openai', 'timeout'));
    vi.useFakeTimers({ toFake: ['setTimeout'], shouldAdvanceTime: true, advanceTimeDelta: 1000 });
    try {
      const res = await execute(id, { input: 'x', mode: 'async' });
      await vi.waitFor(async () => {
        const e = (await call(app, 'GET', `/v1/workflows/${id}/executions/${res.body.data.id}`, { key: t.apiKey })).body.data;
        expect(e.status).toBe('failed');
      }, { timeout: 20_000, interval: 200 });
      const e = (await call(app, 'GET', `/v1/workflows/${id}/executions/${res.body.data.id}`, { key: t.apiKey })).body.data;
      expect(e.steps[0]).toMatchObject({ status: 'failed', attempt: 3, error: { code: 'UPSTREAM_ERROR' } });
      expect(e.steps[1].status).toBe('pending');
      expect(e.error.message).toContain('step1');
    } finally {
      vi.useRealTimers();
      spy.mockRestore();
    }
  }, 30_000);
});

/** A runtime whose workflow-steps queue only collects what is sent, and an app over it. */
function capturing(sent: StepMessage[]) {
  const rt: Runtime = { ...testRt, queues: { ...testRt.queues, workflowSteps: { send: async (messages) => void sent.push(...(messages as StepMessage[])), pending: async () => 0 } } };
  return { rt, app: createLocalApp(rt) };
}

describe('workflow steps under at-least-once delivery', () => {
  let t: TestTenant;
  const sent: StepMessage[] = [];
  // Capture messages instead of running them, to deliver them as SQS might: twice, late, after a crash.
  const { rt, app } = capturing(sent);
  beforeAll(async () => {
    t = await newTenant();
  });
  const delivery = (receiveCount = 1) => ({ receiveCount, maxReceives: MAX_RECEIVES });

  async function started(steps: unknown[]) {
    const id = (await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body: { name: 'w', steps } })).body.data.id;
    sent.length = 0;
    const exe = (await call(app, 'POST', `/v1/workflows/${id}/execute`, { key: t.apiKey, body: { input: 'hello', mode: 'async' } })).body.data;
    return { id, exe };
  }
  const get = async (id: string, exeId: string) => (await call(app, 'GET', `/v1/workflows/${id}/executions/${exeId}`, { key: t.apiKey })).body.data;

  it('runs a step once when its message arrives twice, even at the same time, and completes once', async () => {
    const { id, exe } = await started([{ type: 'generation', model: 'gpt-4', prompt: 'a' }, { type: 'generation', model: 'gpt-4', prompt: 'b' }]);
    const spy = vi.spyOn(localEngine, 'generate');
    try {
      const first = sent.shift()!;
      await Promise.all([handleStepMessage(rt, first, delivery()), handleStepMessage(rt, first, delivery())]);
      await handleStepMessage(rt, first, delivery(2)); // and once more, late
      expect(spy).toHaveBeenCalledTimes(1);
      const next = sent.filter((m) => m.stepId === 'step2');
      expect(next.length).toBeGreaterThanOrEqual(1); // re-sent by the late duplicate: harmless
      for (const m of next) await handleStepMessage(rt, m, delivery());
      expect(spy).toHaveBeenCalledTimes(2);
    } finally {
      spy.mockRestore();
    }
    const done = await get(id, exe.id);
    expect(done.status).toBe('succeeded');
    expect(done.steps.map((s: { attempt: number }) => s.attempt)).toEqual([1, 1]);
  });

  it('recovers a step whose worker died mid-step: the redelivery runs it again and the execution completes once', async () => {
    const { id, exe } = await started([{ type: 'generation', model: 'gpt-4', prompt: 'a' }]);
    const message = sent.shift()!;
    const settle = vi.spyOn(rt.store.executions, 'settleStep').mockRejectedValueOnce(new Error('worker killed'));
    await expect(handleStepMessage(rt, message, delivery())).rejects.toThrow('worker killed');
    settle.mockRestore();
    expect((await get(id, exe.id)).steps[0].status).toBe('running');
    // Redelivered before the lease ends: left alone (the first worker may still be at it).
    await handleStepMessage(rt, message, delivery(2));
    expect((await get(id, exe.id)).steps[0]).toMatchObject({ status: 'running', attempt: 1 });
    // Redelivered after the lease: taken over and finished.
    await handleStepMessage(runtimeLater(rt, 10 * 60_000), message, delivery(3));
    const done = await get(id, exe.id);
    expect(done.status).toBe('succeeded');
    expect(done.steps[0]).toMatchObject({ status: 'succeeded', attempt: 2 });
  });

  it('marks the execution failed when a message keeps failing to its last delivery', async () => {
    const { id, exe } = await started([{ type: 'generation', model: 'gpt-4', prompt: 'a' }]);
    const message = sent.shift()!;
    const spy = vi.spyOn(rt.store.executions, 'claimStep').mockRejectedValue(new Error('table unreachable'));
    try {
      await expect(consumeStepMessage(rt, message, delivery(MAX_RECEIVES - 1))).rejects.toThrow();
      expect((await get(id, exe.id)).status).toBe('running');
      await expect(consumeStepMessage(rt, message, delivery(MAX_RECEIVES))).rejects.toThrow();
    } finally {
      spy.mockRestore();
    }
    const failed = await get(id, exe.id);
    expect(failed.status).toBe('failed');
    expect(failed.error.message).toContain('step1');
  });

  it('cancels a running execution: every step that had not finished is canceled, and never runs', async () => {
    const { id, exe } = await started([{ type: 'generation', model: 'gpt-4', prompt: 'a' }, { type: 'transform', expression: '1' }]);
    const canceled = await call(app, 'POST', `/v1/workflows/${id}/executions/${exe.id}/cancel`, { key: t.apiKey });
    expect(canceled.body.data.status).toBe('canceled');
    expect(canceled.body.data.steps.map((s: { status: string }) => s.status)).toEqual(['canceled', 'canceled']);
    expect(canceled.body.data.steps.every((s: { finishedAt?: string }) => s.finishedAt === canceled.body.data.finishedAt)).toBe(true);
    const again = await call(app, 'POST', `/v1/workflows/${id}/executions/${exe.id}/cancel`, { key: t.apiKey });
    expect(again.status).toBe(409);
    const spy = vi.spyOn(localEngine, 'generate');
    await handleStepMessage(rt, sent.shift()!, delivery());
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
    expect((await get(id, exe.id)).steps.map((s: { status: string }) => s.status)).toEqual(['canceled', 'canceled']);
  });
});

describe('the workflow steps Lambda handler with SQS event records', () => {
  it('runs duplicate records once and reports poison records as batch item failures', async () => {
    const { handler } = await import('../functions/workflow-steps/handler');
    const { recordOf } = await import('./helpers/sqs');
    const t = await newTenant();
    const sent: StepMessage[] = [];
    const { app } = capturing(sent);
    const id = (await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body: { name: 'w', steps: [{ type: 'generation', model: 'gpt-4', prompt: 'hi' }] } })).body.data.id;
    const exe = (await call(app, 'POST', `/v1/workflows/${id}/execute`, { key: t.apiKey, body: { mode: 'async' } })).body.data;
    const body = JSON.stringify(sent[0]);
    const spy = vi.spyOn(localEngine, 'generate');
    try {
      const result = await handler({
        Records: [
          recordOf({ MessageId: 'a', ReceiptHandle: 'ra', Body: body }),
          recordOf({ MessageId: 'b', ReceiptHandle: 'rb', Body: body }, 2),
          recordOf({ MessageId: 'c', ReceiptHandle: 'rc', Body: '{not json' }),
        ],
      });
      expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'c' }]);
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
    const done = (await call(app, 'GET', `/v1/workflows/${id}/executions/${exe.id}`, { key: t.apiKey })).body.data;
    expect(done).toMatchObject({ status: 'succeeded', steps: [{ status: 'succeeded', attempt: 1 }] });
  });
});
