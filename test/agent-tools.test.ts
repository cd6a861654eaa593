import { createServer, type IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { agents } from '../shared/agents/agents';
import type { Agent } from '../shared/agents/agent-schema';
import { callableTools, runTool, toolContext, type ToolCallOptions } from '../shared/agents/agent-tools';
import type { OutboundPolicy } from '../shared/net/outbound';
import { call } from './helpers/http';
import { newId } from '../shared/ids';
import { testLocal, testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/** An order-status service on this machine, standing in for a shop's API. */
const seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders; body: string }> = [];
const shop = createServer((req, res) => {
  let body = '';
  req.on('data', (d: Buffer) => (body += d.toString()));
  req.on('end', () => {
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
    const order = /^\/orders\/([^/?]+)/.exec(req.url!)?.[1];
    if (req.headers.authorization !== 'Bearer shop-secret-token') return res.writeHead(401).end('no');
    if (order === '404') return res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no such order"}');
    if (order === 'big') return res.end('y'.repeat(50_000));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ order: decodeURIComponent(order ?? ''), status: 'shipped', eta: '2026-11-25' }));
  });
});
/** Calls the agent's tool at `index` (of those the model is given) as a turn would. */
async function runAgentTool(agent: Agent, index: number, args: unknown, options: ToolCallOptions = {}) {
  const context = toolContext(testRt, t.scope, agent, options);
  const tools = await callableTools(context);
  return runTool(tools[index]!, args, context);
}
const local: OutboundPolicy = { allowedHosts: new Set(), allowPrivateNetworks: true };
const app = createLocalApp(testRt);
let base = '';

const orderTool = (url: string) => ({
  type: 'http',
  name: 'order_status',
  description: 'Looks up the status of an order by its number',
  parameters: { type: 'object', properties: { orderId: { type: 'string', pattern: '^[A-Za-z0-9]+$' } }, required: ['orderId'] },
  url,
  auth: { type: 'bearer', token: 'shop-secret-token' },
});

let t: TestTenant;
describe('tools on agents', () => {
  beforeAll(async () => {
    await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(shop.address() as { port: number }).port}`;
    t = await newTenant();
  });
  afterAll(async () => {
    shop.closeAllConnections();
    await new Promise<void>((resolve) => shop.close(() => resolve()));
  });

  it('stores a tool’s secret sealed, never returns it, and keeps it when the agent is sent back as read', async () => {
    const created = await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Support', model: 'gpt-4', tools: [orderTool(`${base}/orders/{{orderId}}`), { type: 'knowledge_search' }] } });
    expect(created.status).toBe(201);
    expect(JSON.stringify(created.body)).not.toContain('shop-secret-token');
    expect(created.body.data.tools[0].auth).toEqual({ type: 'bearer', configured: true });
    expect(created.body.data.tools[1]).toMatchObject({ type: 'knowledge_search', name: 'search_knowledge', requireApproval: false });
    const id = created.body.data.id as string;
    const stored = await agents.get(testRt, t.scope, id);
    expect(JSON.stringify(stored)).not.toContain('shop-secret-token');

    // A client that PUTs back what it read changes nothing: the sealed secret is kept.
    const { id: _i, createdAt: _c, updatedAt: _u, version: _v, ...asRead } = (await call(app, 'GET', `/v1/agents/${id}`, { key: t.apiKey })).body.data;
    expect(JSON.stringify(asRead)).not.toContain('shop-secret-token');
    expect((await call(app, 'PUT', `/v1/agents/${id}`, { key: t.apiKey, body: asRead })).status).toBe(200);
    const agent = await agents.get(testRt, t.scope, id);
    const outcome = await runAgentTool(agent, 0, { orderId: 'A17' }, { policy: local });
    expect(outcome).toEqual({ ok: true, result: JSON.stringify({ order: 'A17', status: 'shipped', eta: '2026-11-25' }) });
    expect(seen[seen.length - 1]).toMatchObject({ method: 'GET', url: '/orders/A17' });
  });

  it.each([
    ['tools[0].url', [{ ...orderTool('https://shop.example/orders/{{order}}') }]],
    ['tools[0].url', [{ ...orderTool('ftp://shop.example/{{orderId}}') }]],
    ['tools[1].name', [orderTool('https://shop.example/{{orderId}}'), orderTool('https://shop.example/{{orderId}}')]],
    ['tools[0].auth.token', [{ ...orderTool('https://shop.example/{{orderId}}'), auth: { type: 'bearer' } }]],
    ['tools[0].parameters.type', [{ ...orderTool('https://shop.example/{{orderId}}'), parameters: { type: 'string' } }]],
    ['tools[0].parameters.required[0]', [{ ...orderTool('https://shop.example/x'), parameters: { type: 'object', properties: {}, required: ['nope'] } }]],
    ['tools[0].workflowId', [{ type: 'workflow', name: 'run', description: 'Runs it', workflowId: 'nope' }]],
    // Well formed, but not this tenant's (no tenant has it): refused when written, not when called.
    ['tools[0].workflowId', [{ type: 'workflow', name: 'run', description: 'Runs it', workflowId: newId('workflow', Date.now()) }]],
    ['tools[0].url', [{ type: 'mcp', name: 'm', description: 'An MCP server', url: 'https://user:pass@mcp.example/mcp' }]],
    ['tools[0].type', [{ type: 'teleport', name: 'x', description: 'y' }]],
  ])('rejects a bad %s', async (field, tools) => {
    const res = await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Bad', model: 'gpt-4', tools } });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe(field);
  });

  it('calls an http tool: arguments checked and URL-encoded, errors and refusals reported as tool errors, results capped', async () => {
    const created = await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Support', model: 'gpt-4', tools: [orderTool(`${base}/orders/{{orderId}}`)] } });
    const agent = await agents.get(testRt, t.scope, created.body.data.id);
    expect(await runAgentTool(agent, 0, { orderId: '../admin' }, { policy: local })).toMatchObject({ ok: false, error: expect.stringContaining('invalid arguments: orderId'), retryable: false, invalidArguments: true });
    expect(await runAgentTool(agent, 0, {}, { policy: local })).toMatchObject({ ok: false, error: expect.stringContaining('orderId') });
    expect(await runAgentTool(agent, 0, { orderId: '404' }, { policy: local })).toEqual({ ok: false, error: 'HTTP 404: {"error":"no such order"}', retryable: false, invalidArguments: false });
    const big = await runAgentTool(agent, 0, { orderId: 'big' }, { policy: local, maxResultBytes: 1000 });
    expect(big.ok && big.result.length).toBeLessThan(1100);
    expect(big.ok && big.result).toMatch(/\[truncated/);
    // The deployment's own policy: 127.0.0.1 is refused, as is a tool aimed at the metadata service.
    expect(await runAgentTool(agent, 0, { orderId: 'A1' })).toMatchObject({ ok: false, error: expect.stringMatching(/not a public address/) });
    const metadata = await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Sneaky', model: 'gpt-4', tools: [{ ...orderTool('http://169.254.169.254/latest/meta-data/{{orderId}}') }] } });
    const sneaky = await agents.get(testRt, t.scope, metadata.body.data.id);
    expect(await runAgentTool(sneaky, 0, { orderId: 'iam' }, { policy: local })).toMatchObject({ ok: false, error: expect.stringMatching(/169\.254\.169\.254 is not a public address/) });
  });

  it('keeps an argument inside its URL segment: `.` and `..` are invalid arguments, never a move along the path', async () => {
    const refund = { ...orderTool(`${base}/orders/{{orderId}}/refund`), name: 'refund', parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] } };
    const created = await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Refunds', model: 'gpt-4', tools: [refund] } });
    const agent = await agents.get(testRt, t.scope, created.body.data.id);
    const before = seen.length;
    for (const orderId of ['..', '.']) {
      expect(await runAgentTool(agent, 0, { orderId }, { policy: local })).toMatchObject({ ok: false, error: expect.stringContaining('invalid arguments: orderId'), invalidArguments: true });
    }
    expect(seen.length).toBe(before);
    // Dots inside a value are the value's: encoded where they could be read as a path.
    await runAgentTool(agent, 0, { orderId: '..%2F..' }, { policy: local });
    expect(seen[seen.length - 1]!.url).toBe('/orders/..%252F../refund');
  });

  it('searches the agent’s sources and runs a workflow as tools', async () => {
    const ks = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'kb', type: 'file-collection', files: [{ path: 'returns.md', content: '# Returns\n\nItems can be returned within 30 days.' }] } });
    await call(app, 'POST', `/v1/knowledge-sources/${ks.body.data.id}/connect`, { key: t.apiKey, body: {} });
    await testLocal.ingestion!.drain();
    const wf = await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body: { name: 'echo', steps: [{ type: 'generation', config: { model: 'gpt-4', prompt: 'Repeat: {{user_message}}' } }] } });
    const created = await call(app, 'POST', '/v1/agents', {
      key: t.apiKey,
      body: { name: 'Helper', model: 'gpt-4', knowledgeSourceIds: [ks.body.data.id], tools: [{ type: 'knowledge_search' }, { type: 'workflow', name: 'echo', description: 'Echoes', workflowId: wf.body.data.id }] },
    });
    const agent = await agents.get(testRt, t.scope, created.body.data.id);
    const found = await runAgentTool(agent, 0, { query: 'how long to return an item' });
    expect(found).toMatchObject({ ok: true, result: expect.stringContaining('returned within 30 days') });
    expect(await runAgentTool(agent, 0, { topK: 3 })).toMatchObject({ ok: false, error: expect.stringContaining('query') });
    const ran = await runAgentTool(agent, 1, { input: 'hello there' }, { timeoutMs: 20_000 });
    expect(ran.ok).toBe(true);
  });
});
