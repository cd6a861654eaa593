import { createServer, type IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { call, type TestResponse } from './helpers/http';
import { startShopMcp, type ShopMcp } from './helpers/mcp-server';
import { newTenant, type TestTenant } from './helpers/tenant';
import { testLocal, testRt } from './helpers/runtime';

/**
 * Workflow steps that reach the world: `http` and `tool` against real local servers, `agent`
 * against the built-in engine, `transform` and `condition` with JSONata, per-step retry policy.
 */
const app = createLocalApp(testRt);

/** A shop's API on this machine: orders, a flaky endpoint, and a log of what it was sent. */
const seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders; body: string }> = [];
const flaky = new Map<string, number>();
const shop = createServer((req, res) => {
  let body = '';
  req.on('data', (d: Buffer) => (body += d.toString()));
  req.on('end', () => {
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
    const url = new URL(req.url!, 'http://x');
    if (url.pathname.startsWith('/flaky/')) {
      // Fails the first `n` requests of each key with 503, then answers.
      const key = url.pathname;
      const failures = Number(url.searchParams.get('fail') ?? 2);
      const count = (flaky.get(key) ?? 0) + 1;
      flaky.set(key, count);
      if (count <= failures) return res.writeHead(503).end('busy');
      return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, tries: count }));
    }
    if (req.headers.authorization !== 'Bearer shop-token') return res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
    const order = /^\/orders\/([^/]+)$/.exec(url.pathname)?.[1];
    if (req.method === 'GET' && order) {
      if (order === 'missing') return res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no such order"}');
      return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: decodeURIComponent(order), amount: order === 'A1' ? 120 : 900, currency: 'EUR', email: 'ann@example.com' }));
    }
    if (req.method === 'POST' && url.pathname === '/refunds') return res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ refunded: JSON.parse(body) }));
    res.writeHead(404).end();
  });
});

let base = '';
let mcp: ShopMcp;
let t: TestTenant;

const create = async (body: unknown) => {
  const res = await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as { id: string; steps: Array<{ config: Record<string, unknown> }> };
};
const execute = async (id: string, body: unknown) => {
  const res = await call(app, 'POST', `/v1/workflows/${id}/execute`, { key: t.apiKey, body });
  if (res.status === 202) {
    await testLocal.workflowSteps!.drain();
    return (await call(app, 'GET', `/v1/workflows/${id}/executions/${res.body.data.id}`, { key: t.apiKey })).body.data;
  }
  expect(res.status).toBe(200);
  return res.body.data;
};
/** One step of an execution as the API shows it (JSON of any shape: the response body's type). */
const stepOf = (execution: TestResponse['body'], id: string): TestResponse['body'] => (execution.steps as Array<{ id: string }>).find((s) => s.id === id);

describe('workflow steps that reach the world', () => {
  beforeAll(async () => {
    await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
    base = `http://localhost:${(shop.address() as { port: number }).port}`;
    mcp = await startShopMcp();
    t = await newTenant();
  });
  afterAll(async () => {
    shop.closeAllConnections();
    await new Promise<void>((resolve) => shop.close(() => resolve()));
    await mcp.close();
  });

  it('http: templated URL and JSON body, sealed auth never shown and kept when sent back, JSON parsed', async () => {
    const wf = await create({
      name: 'refund',
      steps: [
        { id: 'lookup', type: 'http', url: `${base}/orders/{{parameters.orderId}}`, auth: { type: 'bearer', token: 'shop-token' } },
        {
          id: 'refund',
          type: 'http',
          method: 'POST',
          url: `${base}/refunds`,
          auth: { type: 'bearer', token: 'shop-token' },
          headers: { 'x-reason': 'customer: {{input}}' },
          body: { order: '{{steps.lookup.output.body.id}}', amount: '{{steps.lookup.output.body.amount}}', note: 'for {{steps.lookup.output.body.email}}' },
          expect: [201],
        },
      ],
    });
    expect(JSON.stringify(wf)).not.toContain('shop-token');
    expect(wf.steps[0]!.config.auth).toEqual({ type: 'bearer', configured: true });
    const exe = await execute(wf.id, { input: 'double charge', parameters: { orderId: 'A1/../x' } });
    expect(exe.status).toBe('succeeded');
    // The value placed in the path is encoded: it cannot climb out of /orders/.
    expect(seen.find((r) => r.url.startsWith('/orders/'))!.url).toBe('/orders/A1%2F..%2Fx');
    expect(stepOf(exe, 'lookup').output).toMatchObject({ status: 200, body: { id: 'A1/../x', amount: 900 } });
    expect(stepOf(exe, 'lookup').output.headers['content-type']).toContain('application/json');
    const refund = seen.find((r) => r.url === '/refunds')!;
    // A string that is exactly one template keeps the value's type.
    expect(JSON.parse(refund.body)).toEqual({ order: 'A1/../x', amount: 900, note: 'for ann@example.com' });
    expect(refund.headers['x-reason']).toBe('customer: double charge');
    expect(exe.output).toMatchObject({ status: 201, body: { refunded: { amount: 900 } } });

    // Sent back as read (auth without its secret): the stored secret is kept and still works.
    const got = (await call(app, 'GET', `/v1/workflows/${wf.id}`, { key: t.apiKey })).body.data;
    const put = await call(app, 'PUT', `/v1/workflows/${wf.id}`, { key: t.apiKey, body: got });
    expect(put.status).toBe(200);
    expect((await execute(wf.id, { parameters: { orderId: 'A1' } })).status).toBe('succeeded');
    // A new step's auth without a secret is a 400 naming the field.
    const bad = await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body: { name: 'x', steps: [{ type: 'http', url: `${base}/x`, auth: { type: 'bearer' } }] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('steps[0].config.auth.token');
  });

  it('http: a 404 fails at once (not retryable); 503s are retried under the step’s policy; private addresses are refused', async () => {
    const wf = await create({ name: 'lookups', steps: [{ id: 'get', type: 'http', url: `${base}/orders/missing`, auth: { type: 'bearer', token: 'shop-token' } }] });
    const missing = await execute(wf.id, {});
    expect(missing.status).toBe('failed');
    expect(stepOf(missing, 'get')).toMatchObject({ status: 'failed', attempt: 1, error: { code: 'UPSTREAM_ERROR' } });
    expect(stepOf(missing, 'get').error.message).toContain('404');

    const retried = await create({ name: 'flaky', steps: [{ id: 'get', type: 'http', url: `${base}/flaky/a?fail=2`, retry: { maxAttempts: 3, backoff: 'fixed', delaySeconds: 0 } }] });
    const ok = await execute(retried.id, {});
    expect(ok.status).toBe('succeeded');
    expect(stepOf(ok, 'get')).toMatchObject({ attempt: 3, output: { body: { tries: 3 } } });

    const once = await create({ name: 'no retries', steps: [{ id: 'get', type: 'http', url: `${base}/flaky/b?fail=1`, retry: { maxAttempts: 1 } }] });
    const failed = await execute(once.id, {});
    expect(stepOf(failed, 'get')).toMatchObject({ status: 'failed', attempt: 1 });

    const metadata = await create({ name: 'ssrf', steps: [{ id: 'get', type: 'http', url: '{{parameters.url}}', retry: { maxAttempts: 1 } }] });
    const refused = await execute(metadata.id, { parameters: { url: 'http://169.254.169.254/latest/meta-data/' } });
    expect(refused.status).toBe('failed');
    expect(stepOf(refused, 'get').error.message).toMatch(/not a public address/);

    // A value placed in the path stays in its segment: `..` fails the step for good, never calls another path.
    const dotted = await create({ name: 'refund', steps: [{ id: 'refund', type: 'http', method: 'POST', url: `${base}/orders/{{parameters.orderId}}/refund`, retry: { maxAttempts: 3, backoff: 'fixed', delaySeconds: 0 } }] });
    const moved = await execute(dotted.id, { parameters: { orderId: '..' } });
    expect(moved.status).toBe('failed');
    expect(stepOf(moved, 'refund')).toMatchObject({ status: 'failed', attempt: 1, error: { message: expect.stringContaining('move along the URL') } });
  });

  it('transform: JSONata over the request and step outputs; a syntax error is a 400 at write time', async () => {
    const wf = await create({
      name: 'shape',
      steps: [
        { id: 'lookup', type: 'http', url: `${base}/orders/{{parameters.orderId}}`, auth: { type: 'bearer', token: 'shop-token' } },
        { id: 'shape', type: 'transform', expression: '{ "order": steps.lookup.output.body.id, "cents": steps.lookup.output.body.amount * 100, "who": $uppercase(parameters.name), "words": $count($split(input, " ")) }' },
      ],
    });
    const exe = await execute(wf.id, { input: 'a b c', parameters: { orderId: 'A1', name: 'ann' } });
    expect(exe.output).toEqual({ order: 'A1', cents: 12000, who: 'ANN', words: 3 });

    const bad = await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body: { name: 'x', steps: [{ type: 'transform', expression: '$sum(items.' }] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('steps[0].config.expression');
    expect(bad.body.error.message).toContain('JSONata');

    // An expression that never ends is stopped by its time limit: the step fails, not the worker.
    const loop = await create({ name: 'loop', steps: [{ id: 'spin', type: 'transform', expression: '( $f := function($i){ $f($i + 1) }; $f(0) )' }] });
    const stopped = await execute(loop.id, {});
    expect(stopped.status).toBe('failed');
    expect(stepOf(stopped, 'spin')).toMatchObject({ attempt: 1, error: { code: 'UNPROCESSABLE' } });
  });

  it('condition: chooses the branch; the other branch and what depends only on it are skipped', async () => {
    const wf = await create({
      name: 'threshold',
      steps: [
        { id: 'lookup', type: 'http', url: `${base}/orders/{{parameters.orderId}}`, auth: { type: 'bearer', token: 'shop-token' } },
        { id: 'big', type: 'condition', expression: 'steps.lookup.output.body.amount > 500', then: ['approve'], else: ['auto'] },
        { id: 'approve', type: 'transform', expression: '"needs approval"', dependsOn: ['big'] },
        { id: 'notify', type: 'transform', expression: '"manager told"', dependsOn: ['approve'] },
        { id: 'auto', type: 'transform', expression: '"refunded automatically"', dependsOn: ['big'] },
        { id: 'done', type: 'transform', expression: '"done"', dependsOn: ['notify', 'auto'] },
      ],
    });
    const statuses = (e: { steps: Array<{ id: string; status: string }> }) => Object.fromEntries(e.steps.map((s) => [s.id, s.status]));
    const large = await execute(wf.id, { parameters: { orderId: 'B2' } });
    expect(statuses(large)).toEqual({ lookup: 'succeeded', big: 'succeeded', approve: 'succeeded', notify: 'succeeded', auto: 'skipped', done: 'succeeded' });
    expect(stepOf(large, 'big').output).toEqual({ result: true });
    const small = await execute(wf.id, { parameters: { orderId: 'A1' } });
    expect(statuses(small)).toEqual({ lookup: 'succeeded', big: 'succeeded', approve: 'skipped', notify: 'skipped', auto: 'succeeded', done: 'succeeded' });

    const compiled = await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body: { name: 'x', steps: [{ id: 'a', type: 'transform', expression: '1' }, { id: 'c', type: 'condition', expression: 'true', then: ['a'] }] } });
    expect(compiled.status).toBe(400);
    expect(compiled.body.error.details.field).toBe('steps[1].config.then[0]');
  });

  it('tool: calls an MCP server’s tool and an http tool definition with templated arguments', async () => {
    const wf = await create({
      name: 'tools',
      steps: [
        { id: 'status', type: 'tool', tool: { type: 'mcp', name: 'shop', url: mcp.url, auth: { type: 'bearer', token: 'mcp-token' } }, name: 'shop_order_status', arguments: { orderId: '{{parameters.orderId}}' } },
        {
          id: 'order',
          type: 'tool',
          tool: { type: 'http', name: 'order', description: 'Gets an order', url: `${base}/orders/{{id}}`, parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }, auth: { type: 'bearer', token: 'shop-token' } },
          arguments: { id: '{{parameters.orderId}}' },
        },
      ],
    });
    expect(JSON.stringify(wf)).not.toMatch(/mcp-token|shop-token/);
    const exe = await execute(wf.id, { parameters: { orderId: 'A17' } });
    expect(exe.status).toBe('succeeded');
    expect(stepOf(exe, 'status').output.result).toContain('order A17: shipped');
    expect(stepOf(exe, 'order').output.result).toMatchObject({ id: 'A17', amount: 900 });

    // Arguments the tool refuses (the MCP tool wants A17-like numbers): the step fails without retrying.
    const refused = await execute(wf.id, { parameters: { orderId: 'nope' } });
    expect(refused.status).toBe('failed');
    expect(stepOf(refused, 'status')).toMatchObject({ status: 'failed', attempt: 1, error: { code: 'INVALID_REQUEST' } });
  });

  it('agent: one turn with a tenant agent, its reply and sources as the output; the agent must exist', async () => {
    const agent = (await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Writer', model: 'gpt-4', instructions: 'Write short replies.' } })).body.data;
    const wf = await create({ name: 'reply', steps: [{ id: 'write', type: 'agent', agentId: agent.id, message: 'Reply to: {{input}}', sessionId: 'case-{{parameters.case}}' }] });
    const exe = await execute(wf.id, { input: 'Where is my parcel?', parameters: { case: '42' } });
    expect(exe.status).toBe('succeeded');
    expect(exe.output.reply.length).toBeGreaterThan(0);
    expect(exe.output.sessionId).toBe('case-42');
    expect(Array.isArray(exe.output.sources)).toBe(true);
    // The turn is in the agent's session, as a conversation through the API would be.
    const messages = await call(app, 'GET', `/v1/agents/${agent.id}/sessions/case-42/messages`, { key: t.apiKey });
    expect(messages.body.data.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', 'Reply to: Where is my parcel?'],
      ['assistant', exe.output.reply],
    ]);

    const missing = await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body: { name: 'x', steps: [{ type: 'agent', agentId: 'agt_01jd8x2k3m4n5p6q7r8s9t0v1w', message: 'hi' }] } });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.field).toBe('steps[0].config.agentId');
  });

  it('compiles new step kinds for the platform API, with template errors naming the field', async () => {
    const bad = await call(app, 'POST', '/v1/workflows', {
      key: t.apiKey,
      body: { name: 'x', steps: [{ id: 'a', type: 'http', url: `${base}/orders/{{steps.nope.output.body}}` }, { id: 'b', type: 'http', method: 'POST', url: `${base}/r`, body: { x: '{{item}}' } }] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.issues.map((i: { field: string }) => i.field)).toEqual(['steps[0].config.url', 'steps[1].config.body.x']);
  });
});
