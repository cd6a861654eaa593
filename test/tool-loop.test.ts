import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { openaiProvider } from '../shared/models/openai-provider';
import { randomBytes } from 'node:crypto';
import { localRuntime } from '../local/local-runtime';
import { createDb } from '../shared/store/db';
import { scriptedModel } from './helpers/scripted-model';
import type { Runtime } from '../shared/runtime';
import { call } from './helpers/http';
import { parseSse } from './helpers/sse';
import { testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/** The support-agent demo: an order-status service on this machine, and agents that call it. */
const orders: Record<string, unknown> = { A17: { order: 'A17', status: 'shipped', carrier: 'DHL', eta: '2026-11-25' } };
const refunds: string[] = [];
const shop = createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/refunds') {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      refunds.push((JSON.parse(body) as { orderId: string }).orderId);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ refunded: true, amount: 49 }));
    });
    return;
  }
  const id = decodeURIComponent(/^\/orders\/([^/?]+)/.exec(req.url ?? '')?.[1] ?? '');
  const order = orders[id];
  res.writeHead(order ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(order ?? { error: `no order ${id}` }));
});
let shopUrl = '';
const orderTool = () => ({
  type: 'http',
  name: 'order_status',
  description: 'Looks up the delivery status of an order by its order number',
  parameters: { type: 'object', properties: { orderId: { type: 'string', pattern: '^[A-Z][0-9]+$', description: 'like A17' } }, required: ['orderId'] },
  url: `${shopUrl}/orders/{{orderId}}`,
});

describe('the tool loop', () => {
  let t: TestTenant;
  const app = createLocalApp(testRt);
  let agentId: string;
  beforeAll(async () => {
    await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
    shopUrl = `http://localhost:${(shop.address() as { port: number }).port}`;
    t = await newTenant();
    const created = await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Support', model: 'gpt-4', tools: [orderTool()] } });
    expect(created.status).toBe(201);
    agentId = created.body.data.id;
  });
  afterAll(async () => {
    shop.closeAllConnections();
    await new Promise<void>((resolve) => shop.close(() => resolve()));
  });

  it('the built-in engine calls the tool with the argument taken from the message, and answers from its result', async () => {
    const res = await call(app, 'POST', `/v1/agents/${agentId}/converse`, { key: t.apiKey, body: { message: 'Where is my order A17?' } });
    expect(res.status).toBe(200);
    const turn = res.body.data;
    expect(turn.toolCalls).toEqual([expect.objectContaining({ tool: 'order_status', arguments: { orderId: 'A17' }, result: JSON.stringify(orders.A17) })]);
    expect(turn.reply).toContain('status: shipped');
    expect(turn.reply).toContain('[order_status]');
    // Stored with the turn.
    const messages = await call(app, 'GET', `/v1/agents/${agentId}/sessions/${turn.sessionId}/messages`, { key: t.apiKey });
    expect(messages.body.data[1].toolCalls[0]).toMatchObject({ tool: 'order_status', result: JSON.stringify(orders.A17) });
  });

  it('honours toolChoice on converse: none never calls, required calls, a name must be one of the agent’s tools', async () => {
    const none = await call(app, 'POST', `/v1/agents/${agentId}/converse`, { key: t.apiKey, body: { message: 'Where is my order A17?', toolChoice: 'none' } });
    expect(none.status).toBe(200);
    expect(none.body.data.toolCalls).toBeUndefined();
    const required = await call(app, 'POST', `/v1/agents/${agentId}/converse`, { key: t.apiKey, body: { message: 'Tell me about order A17', toolChoice: 'required' } });
    expect(required.body.data.toolCalls).toEqual([expect.objectContaining({ tool: 'order_status', arguments: { orderId: 'A17' } })]);
    const named = await call(app, 'POST', `/v1/agents/${agentId}/converse`, { key: t.apiKey, body: { message: 'A17 please', toolChoice: { name: 'order_status' } } });
    expect(named.body.data.toolCalls).toEqual([expect.objectContaining({ tool: 'order_status' })]);
    const unknown = await call(app, 'POST', `/v1/agents/${agentId}/converse`, { key: t.apiKey, body: { message: 'A17', toolChoice: { name: 'refund' } } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details.field).toBe('toolChoice.name');
  });

  it('asks for a missing argument by name, and reports a failing call as the tool’s error', async () => {
    const asked = await call(app, 'POST', `/v1/agents/${agentId}/converse`, { key: t.apiKey, body: { message: 'What is the delivery status of my order?' } });
    expect(asked.body.data.reply).toMatch(/need the order id \(like A17\)/);
    expect(asked.body.data.toolCalls).toBeUndefined();
    const missing = await call(app, 'POST', `/v1/agents/${agentId}/converse`, { key: t.apiKey, body: { message: 'Where is order B99?' } });
    expect(missing.body.data.toolCalls[0]).toMatchObject({ tool: 'order_status', error: expect.stringContaining('HTTP 404') });
    expect(missing.body.data.reply).toMatch(/could not get that from order status/);
  });

  it('streams tool_call and tool_result events before the reply', async () => {
    const res = await app.request(`http://localhost/v1/agents/${agentId}/converse`, {
      method: 'POST',
      headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ message: 'Where is my order A17?' }),
    });
    const events = parseSse(await res.text()).map((e) => e.event);
    expect(events.slice(0, 4)).toEqual(['start', 'sources', 'tool_call', 'tool_result']);
    expect(events).toContain('delta');
    expect(events[events.length - 1]).toBe('done');
  });

  it('runs the loop with an OpenAI-compatible provider: native tool_calls out, tool messages back', async () => {
    const seen: Array<Record<string, unknown>> = [];
    const provider = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        const request = JSON.parse(body) as Record<string, unknown>;
        seen.push(request);
        const reply =
          seen.length === 1
            ? { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'order_status', arguments: '{"orderId":"A17"}' } }] }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 50, completion_tokens: 10 } }
            : { choices: [{ index: 0, message: { role: 'assistant', content: 'Your order A17 shipped with DHL and arrives on 2026-11-25.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 80, completion_tokens: 15 } };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
      });
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    try {
      const engine = openaiProvider({ baseUrl: `http://127.0.0.1:${(provider.address() as { port: number }).port}/v1`, apiKey: 'sk-test' });
      const rt: Runtime = { ...testRt, models: { resolve: async (name) => ({ name: `openai/${name}`, model: name, engine }) } };
      const res = await call(createLocalApp(rt), 'POST', `/v1/agents/${agentId}/converse`, { key: t.apiKey, body: { message: 'Where is my order A17?' } });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ reply: 'Your order A17 shipped with DHL and arrives on 2026-11-25.', usage: { inputTokens: 130, outputTokens: 25 } });
      expect(res.body.data.toolCalls).toEqual([expect.objectContaining({ id: 'call_abc', tool: 'order_status', result: JSON.stringify(orders.A17) })]);
      expect(seen[0]!.tools).toEqual([{ type: 'function', function: expect.objectContaining({ name: 'order_status', parameters: expect.objectContaining({ required: ['orderId'] }) }) }]);
      const followUp = seen[1]!.messages as Array<Record<string, unknown>>;
      expect(followUp.slice(-2)).toEqual([
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'order_status', arguments: '{"orderId":"A17"}' } }] },
        { role: 'tool', tool_call_id: 'call_abc', content: JSON.stringify(orders.A17) },
      ]);
    } finally {
      await new Promise<void>((resolve) => provider.close(() => resolve()));
    }
  });

  it('pauses a call that needs approval, resumes it from another instance exactly once, and reports a rejection to the model', async () => {
    const refundTool = {
      type: 'http', name: 'refund_order', description: 'Refunds an order by its order number', method: 'POST', url: `${shopUrl}/refunds`, requireApproval: true,
      parameters: { type: 'object', properties: { orderId: { type: 'string', pattern: '^[A-Z][0-9]+$' } }, required: ['orderId'] },
    };
    const created = await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Refunds', model: 'gpt-4', tools: [refundTool] } });
    const id = created.body.data.id as string;
    const paused = await call(app, 'POST', `/v1/agents/${id}/converse`, { key: t.apiKey, body: { message: 'Please refund order A17' } });
    expect(paused.status).toBe(200);
    expect(paused.body.data).toMatchObject({ status: 'requires_action', reply: '', pendingToolCalls: [{ tool: 'refund_order', arguments: { orderId: 'A17' } }] });
    expect(refunds).toEqual([]); // nothing ran yet
    const sessionId = paused.body.data.sessionId as string;
    const callId = paused.body.data.pendingToolCalls[0].id as string;
    const busy = await call(app, 'POST', `/v1/agents/${id}/converse`, { key: t.apiKey, body: { message: 'hello?', context: { sessionId } } });
    expect(busy.status).toBe(409);
    expect(busy.body.error.details.pendingToolCalls[0].id).toBe(callId);

    // Another instance (a restart): the paused turn is in the table, not in this process.
    const other = createLocalApp(localRuntime({ db: createDb(), secretsKey: randomBytes(32), queueNamespace: randomBytes(6).toString('hex') }).rt);
    const incomplete = await call(other, 'POST', `/v1/agents/${id}/converse`, { key: t.apiKey, body: { context: { sessionId }, toolApprovals: [{ id: 'call_other', approved: true }] } });
    expect(incomplete.status).toBe(400);
    expect(incomplete.body.error.details.field).toBe('toolApprovals[0].id');
    const resumed = await call(other, 'POST', `/v1/agents/${id}/converse`, { key: t.apiKey, body: { context: { sessionId }, toolApprovals: [{ id: callId, approved: true }] } });
    expect(resumed.status).toBe(200);
    expect(resumed.body.data).toMatchObject({ status: 'completed', toolCalls: [{ id: callId, tool: 'refund_order', result: '{"refunded":true,"amount":49}' }] });
    expect(resumed.body.data.reply).toContain('refunded: true');
    expect(refunds).toEqual(['A17']);
    const again = await call(app, 'POST', `/v1/agents/${id}/converse`, { key: t.apiKey, body: { context: { sessionId }, toolApprovals: [{ id: callId, approved: true }] } });
    expect(again.status).toBe(409);
    expect(refunds).toEqual(['A17']); // once only
    const stored = await call(app, 'GET', `/v1/agents/${id}/sessions/${sessionId}/messages`, { key: t.apiKey });
    expect(stored.body.data.map((m: { role: string; content: string }) => [m.role, m.content.slice(0, 22)])).toEqual([['user', 'Please refund order A1'], ['assistant', expect.stringContaining('refund order returned')]]);

    // Rejected: the model is told, and nothing is called.
    const second = await call(app, 'POST', `/v1/agents/${id}/converse`, { key: t.apiKey, body: { message: 'Refund order B2 as well', context: { sessionId } } });
    const rejected = await call(app, 'POST', `/v1/agents/${id}/converse`, {
      key: t.apiKey,
      body: { context: { sessionId }, toolApprovals: [{ id: second.body.data.pendingToolCalls[0].id, approved: false, reason: 'over the refund limit' }] },
    });
    expect(rejected.body.data.toolCalls[0]).toMatchObject({ tool: 'refund_order', error: 'A person rejected this call: over the refund limit' });
    expect(rejected.body.data.reply).toContain('over the refund limit');
    expect(refunds).toEqual(['A17']);
  });

  it('resumes a paused turn stored before searches were counted, and answers 500 for one it cannot read, running nothing', async () => {
    const refundTool = {
      type: 'http', name: 'refund_order', description: 'Refunds an order by its order number', method: 'POST', url: `${shopUrl}/refunds`, requireApproval: true,
      parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
    };
    const created = await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Old refunds', model: 'gpt-4', tools: [refundTool] } });
    const id = created.body.data.id as string;
    const scope = t.scope;
    // The shape an earlier release paused turns in: no searches, read units or model calls counted.
    const older = {
      request: { model: 'gpt-4', messages: [{ role: 'user', content: 'Please refund order C3' }], temperature: 0.2, maxTokens: 500 },
      sources: [],
      receivedAt: testRt.clock.now(),
      pendingCalls: [{ id: 'call_old', name: 'refund_order', arguments: { orderId: 'C3' } }],
      progress: { toolCalls: [], usage: { inputTokens: 10, outputTokens: 2 }, step: 0 },
    };
    expect(await testRt.store.pausedTurns.pause(scope, id, 'ses_older', older)).toBe(true);
    const resumed = await call(app, 'POST', `/v1/agents/${id}/converse`, { key: t.apiKey, body: { context: { sessionId: 'ses_older' }, toolApprovals: [{ id: 'call_old', approved: true }] } });
    expect(resumed.status).toBe(200);
    expect(resumed.body.data).toMatchObject({ status: 'completed', toolCalls: [{ id: 'call_old', tool: 'refund_order', result: '{"refunded":true,"amount":49}' }] });
    expect(refunds.at(-1)).toBe('C3');

    const before = refunds.length;
    expect(await testRt.store.pausedTurns.pause(scope, id, 'ses_broken', { ...older, request: 'not a request' })).toBe(true);
    const broken = await call(app, 'POST', `/v1/agents/${id}/converse`, { key: t.apiKey, body: { context: { sessionId: 'ses_broken' }, toolApprovals: [{ id: 'call_old', approved: true }] } });
    expect(broken.status).toBe(500);
    expect(broken.body.error.code).toBe('INTERNAL_ERROR');
    expect(refunds.length).toBe(before);
  });

  it('stops after the agent’s maxToolSteps rounds and says so', async () => {
    let requests = 0; // the turn's model steps (the memory extraction after the turn carries no tools)
    const looping = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        if ((JSON.parse(body) as { tools?: unknown }).tools) requests++;
        const message = { role: 'assistant', content: null, tool_calls: [{ id: `call_${requests}`, type: 'function', function: { name: 'order_status', arguments: '{"orderId":"A17"}' } }] };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ choices: [{ index: 0, message, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 1, completion_tokens: 1 } }));
      });
    });
    await new Promise<void>((resolve) => looping.listen(0, '127.0.0.1', resolve));
    try {
      const created = await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Loopy', model: 'gpt-4', tools: [orderTool()], maxToolSteps: 2 } });
      const engine = openaiProvider({ baseUrl: `http://127.0.0.1:${(looping.address() as { port: number }).port}/v1`, apiKey: 'sk-test' });
      const rt: Runtime = { ...testRt, models: { resolve: async (name) => ({ name: `openai/${name}`, model: name, engine }) } };
      const res = await call(createLocalApp(rt), 'POST', `/v1/agents/${created.body.data.id}/converse`, { key: t.apiKey, body: { message: 'Where is my order A17?' } });
      expect(res.body.data.reply).toBe('I stopped after 2 rounds of tool calls without reaching an answer.');
      expect(res.body.data.toolCalls).toHaveLength(2);
      expect(requests).toBe(3);
    } finally {
      await new Promise<void>((resolve) => looping.close(() => resolve()));
    }
  });

  it('answers 422 naming the model when the agent’s model cannot call tools', async () => {
    const rt: Runtime = { ...testRt, models: scriptedModel('plain text only').models };
    const res = await call(createLocalApp(rt), 'POST', `/v1/agents/${agentId}/converse`, { key: t.apiKey, body: { message: 'Where is my order A17?' } });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toMatchObject({ field: 'tools', model: 'scripted/gpt-4' });
  });
});
