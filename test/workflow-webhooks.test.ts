import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { notifyWebhook } from '../shared/workflows/webhooks';
import { newTenant, type TestTenant } from './helpers/tenant';
import { testLocal, testRt } from './helpers/runtime';

/**
 * Completion webhooks against a real receiver that checks the signature as a customer would
 * (Stripe's scheme), fails when told to, and records what it was sent.
 */
const app = createLocalApp(testRt);
const SECRET = 'whsec_0123456789abcdef0123';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  verified: boolean;
}
const received: Received[] = [];
let failNext = 0;

/** The check a receiver makes: the HMAC of "<t>.<body>" with the shared secret, compared in constant time. */
function verify(header: string | undefined, body: string, secret: string): boolean {
  const parts = Object.fromEntries((header ?? '').split(',').map((p) => p.split('=') as [string, string]));
  if (!parts.t || !parts.v1) return false;
  const expected = createHmac('sha256', secret).update(`${parts.t}.${body}`).digest();
  const given = Buffer.from(parts.v1, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected) && Math.abs(Date.now() / 1000 - Number(parts.t)) < 300;
}

const receiver = createServer((req, res) => {
  let body = '';
  req.on('data', (d: Buffer) => (body += d.toString()));
  req.on('end', () => {
    received.push({ headers: req.headers, body, verified: verify(req.headers['cairn-signature'] as string | undefined, body, SECRET) });
    if (failNext > 0) {
      failNext--;
      return res.writeHead(500).end('down');
    }
    res.writeHead(204).end();
  });
});
let url = '';
let t: TestTenant;

const create = async (body: unknown) => {
  const res = await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
};

describe('completion webhooks', () => {
  beforeAll(async () => {
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    url = `http://localhost:${(receiver.address() as { port: number }).port}/hooks`;
    t = await newTenant();
  });
  afterAll(async () => {
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  it('delivers a signed summary once, after a receiver failing twice; three attempts recorded', async () => {
    const wf = await create({ name: 'hooked', steps: [{ id: 'shape', type: 'transform', expression: '{"total": parameters.n * 2}' }], webhook: { url, secret: SECRET } });
    expect(wf.webhook).toEqual({ url, events: ['succeeded', 'failed', 'canceled'], configured: true });
    expect(JSON.stringify(wf)).not.toContain(SECRET);
    received.length = 0;
    failNext = 2;
    const res = await call(app, 'POST', `/v1/workflows/${wf.id}/execute`, { key: t.apiKey, body: { parameters: { n: 21 } } });
    expect(res.body.data.status).toBe('succeeded');
    await testLocal.workflowSteps!.drain();
    await testLocal.webhooks!.drain();
    expect(received).toHaveLength(3);
    expect(received.every((r) => r.verified)).toBe(true);
    // The same delivery each time: receivers drop repeats by its id.
    expect(new Set(received.map((r) => r.headers['cairn-delivery-id']))).toEqual(new Set([`${res.body.data.id}.succeeded`]));
    const payload = JSON.parse(received[2]!.body);
    expect(payload).toMatchObject({ id: `${res.body.data.id}.succeeded`, event: 'succeeded', execution: { id: res.body.data.id, workflowId: wf.id, status: 'succeeded', output: { total: 42 } } });
    const deliveries = await call(app, 'GET', `/v1/workflows/${wf.id}/executions/${res.body.data.id}/deliveries`, { key: t.apiKey });
    expect(deliveries.status).toBe(200);
    expect(deliveries.body.data).toHaveLength(1);
    expect(deliveries.body.data[0]).toMatchObject({ event: 'succeeded', status: 'delivered', attempt: 3 });
    expect(deliveries.body.data[0].attempts.map((a: { status: number }) => a.status)).toEqual([500, 500, 204]);
    // Backed off: the third attempt came at least 1 + 2 s after the first.
    const at = deliveries.body.data[0].attempts.map((a: { at: string }) => Date.parse(a.at));
    expect(at[2] - at[0]).toBeGreaterThanOrEqual(2_900);

    // Sent back as read, the stored secret is kept: the next delivery is still signed with it.
    const put = await call(app, 'PUT', `/v1/workflows/${wf.id}`, { key: t.apiKey, body: wf });
    expect(put.status).toBe(200);
    received.length = 0;
    await call(app, 'POST', `/v1/workflows/${wf.id}/execute`, { key: t.apiKey, body: { parameters: { n: 1 } } });
    await testLocal.workflowSteps!.drain();
    await testLocal.webhooks!.drain();
    expect(received.map((r) => r.verified)).toEqual([true]);
  }, 30_000);

  it('an execute request’s webhook: waiting and then succeeded, each once; a private address is refused without retries', async () => {
    const wf = await create({
      name: 'approval',
      steps: [
        { id: 'ok', type: 'human', prompt: 'Approve?', schema: { type: 'object', properties: { yes: { type: 'boolean' } }, required: ['yes'] } },
        { id: 'done', type: 'transform', expression: 'steps.ok.output.yes' },
      ],
    });
    received.length = 0;
    const webhook = { url, secret: SECRET, events: ['waiting', 'succeeded'] };
    const res = await call(app, 'POST', `/v1/workflows/${wf.id}/execute`, { key: t.apiKey, body: { webhook } });
    expect(res.status).toBe(202);
    await testLocal.workflowSteps!.drain();
    await testLocal.webhooks!.drain();
    expect(received.map((r) => JSON.parse(r.body).event)).toEqual(['waiting']);
    expect(JSON.parse(received[0]!.body).execution.waiting).toEqual([{ stepId: 'ok', request: expect.objectContaining({ prompt: 'Approve?' }) }]);
    await call(app, 'POST', `/v1/workflows/${wf.id}/executions/${res.body.data.id}/steps/ok/complete`, { key: t.apiKey, body: { input: { yes: true } } });
    await testLocal.workflowSteps!.drain();
    await testLocal.webhooks!.drain();
    expect(received.map((r) => JSON.parse(r.body).event)).toEqual(['waiting', 'succeeded']);
    expect(received.every((r) => r.verified)).toBe(true);

    const noSecret = await call(app, 'POST', `/v1/workflows/${wf.id}/execute`, { key: t.apiKey, body: { webhook: { url } } });
    expect(noSecret.status).toBe(400);
    expect(noSecret.body.error.details.field).toBe('webhook.secret');

    // A refused address is a 400 when written…
    for (const bad of ['http://169.254.169.254/latest', 'http://[::a9fe:a9fe]/latest', `http://user:pass@localhost:${new URL(url).port}/hooks`]) {
      const refused = await call(app, 'POST', `/v1/workflows/${wf.id}/execute`, { key: t.apiKey, body: { webhook: { url: bad, secret: SECRET, events: ['waiting'] } } });
      expect(refused.status, bad).toBe(400);
      expect(refused.body.error.details.field, bad).toBe('webhook.url');
    }
    // …and checked again at delivery (a name can resolve elsewhere by then): one failed attempt, no retries.
    const scope = t.scope;
    const now = new Date().toISOString();
    const record = {
      id: 'exe_01kamwebhookrecheck0000000', workflowId: wf.id, workflowVersion: 1, status: 'succeeded' as const, input: '', parameters: {}, steps: {}, definition: [], usage: { inputTokens: 0, outputTokens: 0 },
      webhook: { url: 'http://169.254.169.254/latest', events: ['succeeded' as const], sealed: await testRt.secrets.seal(SECRET, { tenantId: scope.tenantId, tool: 'webhook', purpose: 'workflow-webhook' }) },
      createdAt: now, startedAt: now, finishedAt: now,
    };
    await testRt.store.executions.createExecution(scope, record);
    await notifyWebhook(testRt, scope, record, 'succeeded');
    await testLocal.webhooks!.drain();
    const deliveries = (await call(app, 'GET', `/v1/workflows/${wf.id}/executions/${record.id}/deliveries`, { key: t.apiKey })).body.data;
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ status: 'failed', attempt: 1 });
    expect(deliveries[0].attempts[0].error).toMatch(/not a public address/);
  }, 30_000);
});

describe('inbound hooks', () => {
  let wf: string;
  beforeAll(async () => {
    t ??= await newTenant();
    wf = (await create({ name: 'from outside', steps: [{ id: 'echo', type: 'transform', expression: '{ "input": input, "order": parameters.orderId }' }] })).id;
  });
  const post = (path: string, body: string, headers: Record<string, string> = {}) => app.request(path, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });

  it('a token hook starts the workflow without an API key; wrong tokens and deleted hooks are refused alike', async () => {
    const made = await call(app, 'POST', `/v1/workflows/${wf}/hooks`, { key: t.apiKey, body: { name: 'shop' } });
    expect(made.status).toBe(201);
    const hook = made.body.data;
    expect(hook.url).toBe(`/v1/hooks/${hook.id}/${hook.secret}`);
    const res = await post(hook.url, JSON.stringify({ input: 'new order', orderId: 7 }));
    expect(res.status).toBe(202);
    const { data } = (await res.json()) as { data: { executionId: string } };
    await testLocal.workflowSteps!.drain();
    const exe = (await call(app, 'GET', `/v1/workflows/${wf}/executions/${data.executionId}`, { key: t.apiKey })).body.data;
    expect(exe).toMatchObject({ status: 'succeeded', input: 'new order', parameters: { orderId: 7 }, output: { input: 'new order', order: 7 } });
    // A body that is not a JSON object is the input as text.
    const text = await post(hook.url, 'plain words');
    expect(text.status).toBe(202);

    expect((await post(`/v1/hooks/${hook.id}/wrong-token`, '{}')).status).toBe(401);
    expect((await post(`/v1/hooks/${hook.id}`, '{}')).status).toBe(401);
    expect((await post('/v1/hooks/hk_01jd8x2k3m4n5p6q7r8s9t0v1w/x', '{}')).status).toBe(401);
    const listed = (await call(app, 'GET', `/v1/workflows/${wf}/hooks`, { key: t.apiKey })).body.data;
    expect(listed).toEqual([expect.objectContaining({ id: hook.id, name: 'shop', auth: 'token', url: `/v1/hooks/${hook.id}` })]);
    expect(JSON.stringify(listed)).not.toContain(hook.secret);
    expect((await call(app, 'DELETE', `/v1/workflows/${wf}/hooks/${hook.id}`, { key: t.apiKey })).status).toBe(200);
    expect((await post(hook.url, '{}')).status).toBe(401);
  });

  it('a signed hook takes a body signed with its secret within five minutes, and nothing else', async () => {
    const hook = (await call(app, 'POST', `/v1/workflows/${wf}/hooks`, { key: t.apiKey, body: { auth: 'signature' } })).body.data;
    expect(hook.url).toBe(`/v1/hooks/${hook.id}`);
    const body = JSON.stringify({ orderId: 'A9' });
    const sign = (secret: string, at: number, text = body) => `t=${at},v1=${createHmac('sha256', secret).update(`${at}.${text}`).digest('hex')}`;
    const now = Math.floor(Date.now() / 1000);
    expect((await post(hook.url, body, { 'cairn-signature': sign(hook.secret, now) })).status).toBe(202);
    expect((await post(hook.url, body, { 'cairn-signature': sign('another-secret-of-some-length', now) })).status).toBe(401);
    expect((await post(hook.url, body, { 'cairn-signature': sign(hook.secret, now - 600) })).status).toBe(401);
    expect((await post(hook.url, '{"orderId":"B1"}', { 'cairn-signature': sign(hook.secret, now) })).status).toBe(401);
    expect((await post(hook.url, body)).status).toBe(401);
  });

  it('a signed hook refuses a signature with anything after its 64 hex digits, and answers an exact replay with the first execution', async () => {
    const hook = (await call(app, 'POST', `/v1/workflows/${wf}/hooks`, { key: t.apiKey, body: { auth: 'signature' } })).body.data;
    const body = JSON.stringify({ orderId: 'R1' });
    const now = Math.floor(Date.now() / 1000);
    const signed = `t=${now},v1=${createHmac('sha256', hook.secret).update(`${now}.${body}`).digest('hex')}`;
    expect((await post(hook.url, body, { 'cairn-signature': `${signed}zz` })).status).toBe(401);
    expect((await post(hook.url, body, { 'cairn-signature': `${signed}00` })).status).toBe(401);
    const first = await post(hook.url, body, { 'cairn-signature': signed });
    const replay = await post(hook.url, body, { 'cairn-signature': signed });
    expect([first.status, replay.status]).toEqual([202, 202]);
    const [a, b] = (await Promise.all([first.json(), replay.json()])) as Array<{ data: { executionId: string } }>;
    expect(b!.data.executionId).toBe(a!.data.executionId);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });

  it('a sender’s retry with the same Idempotency-Key gets the first execution; another body under that key is a 409', async () => {
    const hook = (await call(app, 'POST', `/v1/workflows/${wf}/hooks`, { key: t.apiKey, body: {} })).body.data;
    const body = JSON.stringify({ orderId: 'K1' });
    const first = await post(hook.url, body, { 'idempotency-key': 'evt_123' });
    const again = await post(hook.url, body, { 'idempotency-key': 'evt_123' });
    expect([first.status, again.status]).toEqual([202, 202]);
    const [a, b] = (await Promise.all([first.json(), again.json()])) as Array<{ data: { executionId: string } }>;
    expect(b!.data.executionId).toBe(a!.data.executionId);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await post(hook.url, JSON.stringify({ orderId: 'K2' }), { 'idempotency-key': 'evt_123' })).status).toBe(409);
    const other = (await (await post(hook.url, body, { 'idempotency-key': 'evt_124' })).json()) as { data: { executionId: string } };
    expect(other.data.executionId).not.toBe(a!.data.executionId);
  });

  it('stops working when its workflow is deleted', async () => {
    const doomed = (await create({ name: 'doomed', steps: [{ type: 'transform', expression: '1' }] })).id;
    const hook = (await call(app, 'POST', `/v1/workflows/${doomed}/hooks`, { key: t.apiKey, body: {} })).body.data;
    expect((await post(hook.url, '{}')).status).toBe(202);
    await testLocal.workflowSteps!.drain();
    expect((await call(app, 'DELETE', `/v1/workflows/${doomed}`, { key: t.apiKey })).status).toBe(200);
    expect((await post(hook.url, '{}')).status).toBe(401);
    expect((await call(app, 'POST', `/v1/workflows/${doomed}/hooks`, { key: t.apiKey, body: {} })).status).toBe(404);
  });
});
