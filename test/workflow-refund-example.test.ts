import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { newTenant, type TestTenant } from './helpers/tenant';
import { testLocal, testRt } from './helpers/runtime';

/**
 * The README's worked example, "refund request": classify → http lookup of the order → condition
 * on the amount → human approval above a threshold → agent reply → completion webhook. A shop
 * API and a webhook receiver run on this machine.
 */
const app = createLocalApp(testRt);
const events: Array<{ event: string; status: string }> = [];
const servers = createServer((req, res) => {
  let body = '';
  req.on('data', (d: Buffer) => (body += d.toString()));
  req.on('end', () => {
    if (req.url === '/hooks') {
      const delivery = JSON.parse(body) as { event: string; execution: { status: string } };
      events.push({ event: delivery.event, status: delivery.execution.status });
      return res.writeHead(204).end();
    }
    const order = /^\/orders\/(\w+)$/.exec(req.url!)?.[1];
    if (!order || req.headers.authorization !== 'Bearer shop-token') return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: order, amount: order.startsWith('BIG') ? 480 : 35, currency: 'EUR' }));
  });
});

/** The worked example's definition, as the README gives it (URLs pointed at this machine). */
function refundWorkflow(base: string, agentId: string) {
  return {
    name: 'Refund request',
    webhook: { url: `${base}/hooks`, secret: 'whsec_refunds_0123456789', events: ['waiting', 'succeeded', 'failed'] },
    steps: [
      {
        id: 'route',
        type: 'classification',
        model: 'local/lexical',
        categories: [
          { name: 'refund', description: 'refund money back charged twice return reimburse' },
          { name: 'other', description: 'question information opening hours' },
        ],
      },
      { id: 'order', type: 'http', url: `${base}/orders/{{parameters.orderId}}`, auth: { type: 'bearer', token: 'shop-token' }, when: { step: 'route', category: 'refund' }, dependsOn: ['route'] },
      { id: 'large', type: 'condition', expression: 'steps.order.output.body.amount > 100', then: ['approve'] },
      {
        id: 'approve',
        type: 'human',
        dependsOn: ['large'],
        prompt: 'Refund {{steps.order.output.body.amount}} EUR on order {{parameters.orderId}}?',
        assignee: 'finance@shop.example',
        schema: { type: 'object', properties: { approved: { type: 'boolean' }, note: { type: 'string' } }, required: ['approved'] },
        timeoutSeconds: 86_400,
        onTimeout: { default: { approved: false } },
      },
      { id: 'decision', type: 'transform', dependsOn: ['large', 'approve'], expression: 'steps.large.output.result = false or steps.approve.output.approved = true' },
      { id: 'reply', type: 'agent', agentId, dependsOn: ['decision'], message: 'Tell the customer whether their refund for order {{parameters.orderId}} is approved ({{steps.decision.output}}). They wrote: {{input}}' },
    ],
  };
}

describe('worked example: refund request', () => {
  let t: TestTenant;
  let base = '';
  let id = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => servers.listen(0, '127.0.0.1', resolve));
    base = `http://localhost:${(servers.address() as { port: number }).port}`;
    t = await newTenant();
    const agent = (await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Refunds desk', model: 'gpt-4', instructions: 'Reply to customers about refunds, briefly.' } })).body.data;
    const created = await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body: refundWorkflow(base, agent.id) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    id = created.body.data.id;
  });
  afterAll(async () => {
    servers.closeAllConnections();
    await new Promise<void>((resolve) => servers.close(() => resolve()));
  });
  const statuses = (e: { steps: Array<{ id: string; status: string }> }) => Object.fromEntries(e.steps.map((s) => [s.id, s.status]));

  it('a small refund goes straight to the reply', async () => {
    events.length = 0;
    const res = await call(app, 'POST', `/v1/workflows/${id}/execute`, { key: t.apiKey, body: { input: 'I was charged twice, please refund me', parameters: { orderId: 'A17' } } });
    expect(res.status).toBe(200);
    expect(statuses(res.body.data)).toEqual({ route: 'succeeded', order: 'succeeded', large: 'succeeded', approve: 'skipped', decision: 'succeeded', reply: 'succeeded' });
    expect(res.body.data.output.reply.length).toBeGreaterThan(0);
    await testLocal.workflowSteps!.drain();
    await testLocal.webhooks!.drain();
    expect(events).toEqual([{ event: 'succeeded', status: 'succeeded' }]);
  });

  it('a large refund waits for finance, then replies; the webhook hears both', async () => {
    events.length = 0;
    const res = await call(app, 'POST', `/v1/workflows/${id}/execute`, { key: t.apiKey, body: { input: 'Please refund my order, it arrived broken', parameters: { orderId: 'BIG9' } } });
    expect(res.status).toBe(202);
    // (Not drained: the step's 24-hour timeout is a delayed message that stays queued.)
    const get = async () => (await call(app, 'GET', `/v1/workflows/${id}/executions/${res.body.data.id}`, { key: t.apiKey })).body.data;
    await vi.waitFor(async () => expect((await get()).status).toBe('waiting'), { timeout: 10_000, interval: 50 });
    const waiting = (await call(app, 'GET', '/v1/executions?status=waiting', { key: t.apiKey })).body.data.find((e: { id: string }) => e.id === res.body.data.id);
    expect(waiting.steps.find((s: { id: string }) => s.id === 'approve').request).toMatchObject({ prompt: 'Refund 480 EUR on order BIG9?', assignee: 'finance@shop.example' });
    const done = await call(app, 'POST', `/v1/workflows/${id}/executions/${res.body.data.id}/steps/approve/complete`, { key: t.apiKey, body: { input: { approved: true, note: 'broken on arrival' } } });
    expect(done.status).toBe(200);
    await vi.waitFor(async () => expect((await get()).status).toBe('succeeded'), { timeout: 10_000, interval: 50 });
    const finished = await get();
    expect(finished.steps.find((s: { id: string }) => s.id === 'decision').output).toBe(true);
    // The delivery is queued just after the execution is marked finished: wait for it to arrive.
    await vi.waitFor(
      async () => {
        await testLocal.webhooks!.drain();
        expect(events.map((e) => e.event)).toEqual(['waiting', 'succeeded']);
      },
      { timeout: 10_000, interval: 50 },
    );
  });

  it('a question that is not a refund skips the whole branch', async () => {
    const res = await call(app, 'POST', `/v1/workflows/${id}/execute`, { key: t.apiKey, body: { input: 'What are your opening hours?', parameters: {} } });
    expect(res.body.data.status).toBe('succeeded');
    expect(statuses(res.body.data)).toEqual({ route: 'succeeded', order: 'skipped', large: 'skipped', approve: 'skipped', decision: 'skipped', reply: 'skipped' });
  });
});
