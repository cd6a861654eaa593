import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localRuntime } from '../local/local-runtime';
import { createLocalApp } from '../local/local-app';
import { handleStepMessage } from '../shared/workflows/execution';
import type { StepMessage } from '../shared/queue/messages';
import { createDb } from '../shared/store/db';
import { call, type TestResponse } from './helpers/http';
import { parseSse } from './helpers/sse';
import { newTenant, type TestTenant } from './helpers/tenant';
import { testLocal, testPlatformSecrets, testRt } from './helpers/runtime';

/**
 * `map` fans items out through the steps queue (bounded concurrency, outputs in order, failure
 * policies, duplicate deliveries); `human` pauses an execution until a person completes it through
 * the API, once, or its time runs out — and a paused execution survives a restart.
 */
const app = createLocalApp(testRt);

/** A pricing service that counts requests in flight; item `fail` answers 422. */
let inFlight = 0;
let maxInFlight = 0;
const requests: string[] = [];
const prices = createServer((req, res) => {
  inFlight++;
  maxInFlight = Math.max(maxInFlight, inFlight);
  requests.push(req.url!);
  const sku = decodeURIComponent(req.url!.split('/').pop()!);
  setTimeout(() => {
    inFlight--;
    if (sku === 'fail') return res.writeHead(422, { 'content-type': 'application/json' }).end('{"error":"unknown sku"}');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ sku, price: sku.length * 10 }));
    // Long enough that items the queue runs at once overlap here even on a loaded machine (at 20 ms,
    // a full suite on two cores sometimes ran them one after another).
  }, 100);
});
let base = '';
let t: TestTenant;

const create = async (body: unknown) => {
  const res = await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.id as string;
};
const start = async (id: string, body: unknown) => {
  const res = await call(app, 'POST', `/v1/workflows/${id}/execute`, { key: t.apiKey, body: { mode: 'async', ...(body as object) } });
  expect(res.status).toBe(202);
  return res.body.data.id as string;
};
const get = async (id: string, executionId: string) => (await call(app, 'GET', `/v1/workflows/${id}/executions/${executionId}`, { key: t.apiKey })).body.data;
/** One step of an execution as the API shows it (JSON of any shape: the response body's type). */
const stepOf = (execution: TestResponse['body'], id: string): TestResponse['body'] => (execution.steps as Array<{ id: string }>).find((s) => s.id === id);
/** The execution once its human step asks (an async execution reaches it in the background). */
async function whenAsked(id: string, executionId: string, stepId: string) {
  for (let tries = 0; tries < 400; tries++) {
    const execution = await get(id, executionId);
    if (stepOf(execution, stepId)?.request) return execution;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`step ${stepId} of ${executionId} never asked`);
}

describe('map steps', () => {
  beforeAll(async () => {
    await new Promise<void>((resolve) => prices.listen(0, '127.0.0.1', resolve));
    base = `http://localhost:${(prices.address() as { port: number }).port}`;
    t = await newTenant();
  });
  afterAll(async () => {
    prices.closeAllConnections();
    await new Promise<void>((resolve) => prices.close(() => resolve()));
  });

  const pricing = (extra: Record<string, unknown> = {}) => ({
    name: 'price list',
    steps: [
      {
        id: 'each',
        type: 'map',
        items: 'parameters.skus',
        concurrency: 3,
        steps: [
          { id: 'price', type: 'http', url: `${base}/prices/{{item}}` },
          { id: 'line', type: 'transform', expression: '{ "n": index, "sku": item, "cents": steps.price.output.body.price * 100 }' },
        ],
        ...extra,
      },
      { id: 'total', type: 'transform', expression: '$sum(steps.each.output.results.cents)' },
    ],
  });

  it('runs the steps for each item, at most `concurrency` at once, outputs in item order', async () => {
    const id = await create(pricing());
    const skus = Array.from({ length: 25 }, (_, i) => `sku-${i}`.padEnd(5 + (i % 4), 'x'));
    maxInFlight = 0;
    const executionId = await start(id, { parameters: { skus } });
    await testLocal.workflowSteps!.drain();
    const exe = await get(id, executionId);
    expect(exe.status).toBe('succeeded');
    const each = stepOf(exe, 'each');
    expect(each.map).toEqual({ total: 25, started: 25, done: 25, failed: 0 });
    expect(each.output.results).toEqual(skus.map((sku, n) => ({ n, sku, cents: sku.length * 1000 })));
    expect(each.output.errors).toEqual([]);
    expect(exe.output).toBe(skus.reduce((sum, sku) => sum + sku.length * 1000, 0));
    expect(maxInFlight).toBeGreaterThan(1);
    expect(maxInFlight).toBeLessThanOrEqual(3);
  });

  it('failFast fails the step at the first failed item; collect reports failed items and goes on', async () => {
    const skus = ['aa', 'fail', 'bbb', 'cccc'];
    const failFast = await create(pricing());
    const failedId = await start(failFast, { parameters: { skus } });
    await testLocal.workflowSteps!.drain();
    const failed = await get(failFast, failedId);
    expect(failed.status).toBe('failed');
    expect(stepOf(failed, 'each')).toMatchObject({ status: 'failed', error: { code: 'UPSTREAM_ERROR' } });
    expect(stepOf(failed, 'each').error.message).toMatch(/^item 1 failed: .*422/);
    expect(stepOf(failed, 'total').status).toBe('pending');

    const collect = await create(pricing({ failurePolicy: 'collect' }));
    const collectedId = await start(collect, { parameters: { skus } });
    await testLocal.workflowSteps!.drain();
    const collected = await get(collect, collectedId);
    expect(collected.status).toBe('succeeded');
    expect(stepOf(collected, 'each').output.results).toEqual([{ n: 0, sku: 'aa', cents: 2000 }, null, { n: 2, sku: 'bbb', cents: 3000 }, { n: 3, sku: 'cccc', cents: 4000 }]);
    expect(stepOf(collected, 'each').output.errors).toEqual([{ index: 1, error: expect.objectContaining({ code: 'UPSTREAM_ERROR' }) }]);
    expect(stepOf(collected, 'each').map).toMatchObject({ done: 4, failed: 1 });
    expect(collected.output).toBe(9000);
  });

  it('an empty list succeeds at once; more items than maxItems fail the step; a single value is one item', async () => {
    const id = await create(pricing({ maxItems: 3 }));
    await testLocal.workflowSteps!.drain();
    const empty = await start(id, { parameters: { skus: [] } });
    await testLocal.workflowSteps!.drain();
    expect(await get(id, empty)).toMatchObject({ status: 'succeeded', steps: [{ id: 'each', output: { results: [], errors: [] } }, { id: 'total' }] });
    const tooMany = await start(id, { parameters: { skus: ['a', 'b', 'c', 'd'] } });
    await testLocal.workflowSteps!.drain();
    expect(stepOf(await get(id, tooMany), 'each').error.message).toContain('at most 3');
    const single = await start(id, { parameters: { skus: 'solo' } });
    await testLocal.workflowSteps!.drain();
    expect(stepOf(await get(id, single), 'each').output.results).toEqual([{ n: 0, sku: 'solo', cents: 4000 }]);
  });

  it('runs an item once when its message is delivered twice', async () => {
    const id = await create(pricing());
    const executionId = await start(id, { parameters: { skus: ['dup-one', 'dup-two'] } });
    await testLocal.workflowSteps!.drain();
    const before = requests.filter((r) => r.includes('dup-')).length;
    // Late duplicates of both items' messages, after the map settled: nothing runs again.
    const message = (item: number): StepMessage => ({ type: 'step', tenantId: t.scope.tenantId, workflowId: id, executionId, stepId: 'each', item });
    await Promise.all([0, 1, 0].map((item) => handleStepMessage(testRt, message(item), { receiveCount: 2, maxReceives: 5 })));
    expect(requests.filter((r) => r.includes('dup-')).length).toBe(before);
    expect(before).toBe(2);
    expect((await get(id, executionId)).status).toBe('succeeded');
  });

  it('refuses a map whose steps reuse an id or read {{item}} outside it, at write time', async () => {
    const reuse = await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body: { name: 'x', steps: [{ id: 'a', type: 'map', items: '[1,2]', steps: [{ id: 'a', type: 'transform', expression: 'item' }] }] } });
    expect(reuse.status).toBe(400);
    expect(reuse.body.error.details.field).toBe('steps[0].config.steps[0].id');
    const human = await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body: { name: 'x', steps: [{ id: 'a', type: 'map', items: '[1,2]', steps: [{ id: 'b', type: 'human', prompt: 'ok?' }] }] } });
    expect(human.status).toBe(400);
    expect(human.body.error.details.field).toBe('steps[0].config.steps[0].type');
  });
});

describe('human steps', () => {
  beforeAll(async () => {
    t ??= await newTenant();
  });

  const approval = (extra: Record<string, unknown> = {}) => ({
    name: 'approval',
    steps: [
      {
        id: 'approve',
        type: 'human',
        prompt: 'Refund {{parameters.amount}} EUR to {{parameters.customer}}?',
        assignee: 'finance@{{parameters.team}}',
        schema: { type: 'object', properties: { approved: { type: 'boolean' }, note: { type: 'string' } }, required: ['approved'] },
        ...extra,
      },
      { id: 'outcome', type: 'transform', expression: 'steps.approve.output.approved ? "refund " & parameters.amount : "declined"' },
    ],
  });

  it('pauses as waiting with its request, is listed across workflows, resumes once with input matching its schema', async () => {
    const id = await create(approval());
    const res = await call(app, 'POST', `/v1/workflows/${id}/execute`, { key: t.apiKey, body: { parameters: { amount: 120, customer: 'Ann', team: 'shop.example' } } });
    // A synchronous execute does not hold the request while a person is awaited.
    expect(res.status).toBe(202);
    await testLocal.workflowSteps!.drain();
    const executionId = res.body.data.id as string;
    const waiting = await get(id, executionId);
    expect(waiting.status).toBe('waiting');
    expect(stepOf(waiting, 'approve')).toMatchObject({ status: 'waiting', request: { prompt: 'Refund 120 EUR to Ann?', assignee: 'finance@shop.example', schema: { required: ['approved'] } } });

    const listed = await call(app, 'GET', '/v1/executions?status=waiting', { key: t.apiKey });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((e: { id: string }) => e.id)).toContain(executionId);
    expect((await call(app, 'GET', '/v1/executions?status=running', { key: t.apiKey })).status).toBe(400);

    const complete = (input: unknown, stepId = 'approve') => call(app, 'POST', `/v1/workflows/${id}/executions/${executionId}/steps/${stepId}/complete`, { key: t.apiKey, body: { input } });
    const wrong = await complete({ approved: 'yes' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.details.field).toBe('input.approved');
    expect((await complete({ approved: true }, 'outcome')).status).toBe(409);
    expect((await complete({ approved: true }, 'ghost')).status).toBe(404);

    const done = await complete({ approved: true, note: 'ok' });
    expect(done.status).toBe(200);
    await testLocal.workflowSteps!.drain();
    const finished = await get(id, executionId);
    expect(finished.status).toBe('succeeded');
    expect(finished.output).toBe('refund 120');
    expect(stepOf(finished, 'approve')).toMatchObject({ status: 'succeeded', output: { approved: true, note: 'ok' }, completedBy: 'api' });
    const again = await complete({ approved: false });
    expect(again.status).toBe(409);
    expect((await call(app, 'GET', '/v1/executions?status=waiting', { key: t.apiKey })).body.data.map((e: { id: string }) => e.id)).not.toContain(executionId);
  });

  it('waits when a person’s step is all it has to do: listed, notified and answered at once, as when a step comes before it', async () => {
    const hooks: string[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        hooks.push((JSON.parse(body) as { event: string }).event);
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://localhost:${(receiver.address() as { port: number }).port}/hook`;
      const id = await create({
        name: 'ask first',
        webhook: { url, secret: 'whsec_0123456789abcdef', events: ['waiting', 'succeeded'] },
        steps: [
          { id: 'approve', type: 'human', prompt: 'Go ahead?', schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } },
        ],
      });
      const started = Date.now();
      const res = await call(app, 'POST', `/v1/workflows/${id}/execute`, { key: t.apiKey, body: {} });
      expect(res.status).toBe(202);
      expect(Date.now() - started).toBeLessThan(10_000); // not held until the sync wait runs out
      const executionId = res.body.data.id as string;
      const waiting = await whenAsked(id, executionId, 'approve');
      await testLocal.workflowSteps!.drain();
      expect((await get(id, executionId)).status).toBe('waiting');
      expect(stepOf(waiting, 'approve').status).toBe('waiting');
      expect((await call(app, 'GET', '/v1/executions?status=waiting', { key: t.apiKey })).body.data.map((e: { id: string }) => e.id)).toContain(executionId);
      await testLocal.webhooks!.drain();
      expect(hooks).toEqual(['waiting']);
      const done = await call(app, 'POST', `/v1/workflows/${id}/executions/${executionId}/steps/approve/complete`, { key: t.apiKey, body: { input: { ok: true } } });
      expect(done.status).toBe(200);
      await testLocal.workflowSteps!.drain();
      expect((await get(id, executionId)).status).toBe('succeeded');
    } finally {
      receiver.closeAllConnections();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });

  it('completes with the default input when its time runs out, or fails', async () => {
    const goOn = await create(approval({ timeoutSeconds: 1, onTimeout: { default: { approved: false } } }));
    const fail = await create(approval({ timeoutSeconds: 1 }));
    const a = await start(goOn, { parameters: { amount: 5 } });
    const b = await start(fail, { parameters: { amount: 5 } });
    expect(stepOf(await whenAsked(goOn, a, 'approve'), 'approve').request.expiresAt).toBeDefined();
    // The queue holds the timeout's delayed message until the time is up; draining waits for it.
    await testLocal.workflowSteps!.drain();
    const timedOut = await get(goOn, a);
    expect(timedOut.status).toBe('succeeded');
    expect(timedOut.output).toBe('declined');
    expect(stepOf(timedOut, 'approve').completedBy).toBe('timeout');
    const failed = await get(fail, b);
    expect(failed.status).toBe('failed');
    expect(stepOf(failed, 'approve').error.message).toContain('within 1 s');

    const badDefault = await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body: approval({ timeoutSeconds: 5, onTimeout: { default: { approved: 'no' } } }) });
    expect(badDefault.status).toBe(400);
    expect(badDefault.body.error.details.field).toBe('steps[0].config.onTimeout.default');
  });

  it('streams its progress as server-sent events, from the snapshot to execution.finished', async () => {
    const id = await create({
      name: 'streamed',
      steps: [
        { id: 'each', type: 'map', items: '[1, 2, 3]', concurrency: 1, steps: [{ id: 'double', type: 'transform', expression: 'item * 2' }] },
        ...approval().steps,
      ],
    });
    const executionId = await start(id, { parameters: { amount: 7 } });
    const stream = await app.request(`/v1/workflows/${id}/executions/${executionId}/events`, { headers: { 'x-api-key': t.apiKey } });
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    const reader = stream.body!.getReader();
    let text = '';
    const readUntil = async (marker: string) => {
      while (!text.includes(marker)) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
    };
    await readUntil('event: execution.waiting');
    await call(app, 'POST', `/v1/workflows/${id}/executions/${executionId}/steps/approve/complete`, { key: t.apiKey, body: { input: { approved: true } } });
    await readUntil('event: execution.finished');
    await readUntil('\n\n\u0000'); // reads to the end: the stream closes after execution.finished
    const events = parseSse(text);
    const names = events.map((e) => e.event);
    expect(names[0]).toBe('snapshot');
    expect(names.at(-1)).toBe('execution.finished');
    expect(names).toEqual(expect.arrayContaining(['step.started', 'step.progress', 'step.succeeded', 'step.waiting', 'execution.waiting']));
    // In order: the map finished before the person was asked; the person answered before the end.
    expect(names.indexOf('step.waiting')).toBeLessThan(names.lastIndexOf('step.succeeded'));
    const progress = events.filter((e) => e.event === 'step.progress').map((e) => JSON.parse(e.data).done);
    expect(progress).toEqual([...progress].sort());
    const waiting = JSON.parse(events.find((e) => e.event === 'step.waiting')!.data);
    expect(waiting.request.prompt).toBe('Refund 7 EUR to ?');
    expect(JSON.parse(events.at(-1)!.data)).toMatchObject({ status: 'succeeded', output: 'refund 7' });
  });

  it('survives a restart: another process over the same table resumes the paused execution', async () => {
    const id = await create(approval());
    const executionId = await start(id, { parameters: { amount: 42 } });
    await testLocal.workflowSteps!.drain();
    expect((await get(id, executionId)).status).toBe('waiting');
    await testLocal.stop();
    // A new runtime, as after a restart: nothing of the paused execution lives in memory.
    const restarted = localRuntime({ db: createDb(), secretsKey: randomBytes(32), platformSecrets: testPlatformSecrets, queueNamespace: randomBytes(6).toString('hex') });
    await restarted.start();
    try {
      const after = createLocalApp(restarted.rt);
      const done = await call(after, 'POST', `/v1/workflows/${id}/executions/${executionId}/steps/approve/complete`, { key: t.apiKey, body: { input: { approved: true } } });
      expect(done.status).toBe(200);
      await restarted.workflowSteps!.drain();
      const finished = (await call(after, 'GET', `/v1/workflows/${id}/executions/${executionId}`, { key: t.apiKey })).body.data;
      expect(finished).toMatchObject({ status: 'succeeded', output: 'refund 42' });
    } finally {
      await restarted.stop();
      await testLocal.start();
    }
  });
});
