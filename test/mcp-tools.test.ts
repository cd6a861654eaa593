import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { agents } from '../shared/agents/agents';
import { callableTools, runTool, toolContext } from '../shared/agents/agent-tools';
import { call } from './helpers/http';
import { startShopMcp, type ShopMcp } from './helpers/mcp-server';
import { testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/** MCP tools against a real MCP server built with the official SDK, on this machine. */
const app = createLocalApp(testRt);
let mcp: ShopMcp;
let t: TestTenant;
const mcpTool = (extra: Record<string, unknown> = {}) => ({ type: 'mcp', name: 'shop', url: mcp.url, auth: { type: 'bearer', token: 'mcp-token' }, ...extra });

async function agentWith(tools: unknown[]) {
  const created = await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Shop', model: 'gpt-4', tools } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.data as { id: string; tools: Array<Record<string, unknown>> };
}

beforeAll(async () => {
  mcp = await startShopMcp();
  t = await newTenant();
});
afterAll(() => mcp.close());

describe('mcp tools', () => {
  it('lists the server’s tools (once, for a while), calls them, and ends each session', async () => {
    const created = await agentWith([mcpTool()]);
    expect(created.tools[0]!.auth).toEqual({ type: 'bearer', configured: true });
    expect(JSON.stringify(created)).not.toContain('mcp-token');
    const agent = await agents.get(testRt, t.scope, created.id);
    const context = toolContext(testRt, t.scope, agent);
    const tools = await callableTools(context);
    // `huge` (a 30 KB input schema) is left out: the model is sent every tool's schema each turn.
    expect(tools.map((tool) => tool.name)).toEqual(['shop_order_status', 'shop_refund_order', 'shop_broken', 'shop_stock_level']);
    expect(tools[0]!.description).toBe('Looks up the delivery status of an order by its number');
    expect(tools[0]!.parameters).toMatchObject({ type: 'object', properties: { orderId: { type: 'string', description: 'The order number, like A17' } }, required: ['orderId'] });
    const listed = mcp.methods.filter((m) => m === 'tools/list').length;
    await callableTools(context);
    expect(mcp.methods.filter((m) => m === 'tools/list').length).toBe(listed); // kept for a while

    expect(await runTool(tools[0]!, { orderId: 'A17' }, context)).toEqual({ ok: true, result: 'order A17: shipped, arriving 2026-11-25' });
    expect(mcp.methods.slice(-3)).toEqual(['initialize', 'notifications/initialized', 'tools/call']);
    expect(mcp.sessionsClosed).toBeGreaterThanOrEqual(2); // the listing's session and the call's
    // The server's own error, and arguments its schema refuses (checked here, before any call).
    expect(await runTool(tools[2]!, {}, context)).toEqual({ ok: false, error: 'the warehouse is offline', retryable: true, invalidArguments: false });
    const before = mcp.methods.length;
    expect(await runTool(tools[0]!, { orderId: 'nope' }, context)).toMatchObject({ ok: false, error: expect.stringContaining('invalid arguments: orderId'), retryable: false, invalidArguments: true });
    expect(mcp.methods.length).toBe(before);
    // A tool with an output schema: listed (the client compiles its schema with the validator Cairn gives it) and called.
    expect(await runTool(tools[3]!, { sku: 'BK-7' }, context)).toEqual({ ok: true, result: '{"sku":"BK-7","units":12,"updatedAt":"2026-11-26T10:00:00Z"}' });
  });

  it('gives the model only the allowed tools', async () => {
    const created = await agentWith([mcpTool({ name: 'orders', allowedTools: ['order_status'] })]);
    const agent = await agents.get(testRt, t.scope, created.id);
    expect((await callableTools(toolContext(testRt, t.scope, agent))).map((tool) => tool.name)).toEqual(['orders_order_status']);
  });

  it('reports a server that refuses the credentials as a tool error, and refuses a server at a private address under the deployment’s guard', async () => {
    const wrong = await agentWith([mcpTool({ name: 'wrong', auth: { type: 'bearer', token: 'not-it' }, allowedTools: ['order_status'] })]);
    const agent = await agents.get(testRt, t.scope, wrong.id);
    // Nothing is listed (the turn goes on without these tools)…
    expect(await callableTools(toolContext(testRt, t.scope, agent))).toEqual([]);

    const before = mcp.methods.length;
    const direct = await agentWith([mcpTool({ name: 'direct', url: mcp.url.replace('localhost', '127.0.0.1') })]);
    const guarded = await agents.get(testRt, t.scope, direct.id);
    expect(await callableTools(toolContext(testRt, t.scope, guarded))).toEqual([]);
    expect(mcp.methods.length).toBe(before); // nothing reached the server
  });

  it('answers a question end to end: the built-in engine calls the MCP tool and answers from it', async () => {
    const created = await agentWith([mcpTool({ allowedTools: ['order_status'] })]);
    const res = await call(app, 'POST', `/v1/agents/${created.id}/converse`, { key: t.apiKey, body: { message: 'What is the delivery status of order A17?' } });
    expect(res.status).toBe(200);
    expect(res.body.data.toolCalls).toMatchObject([{ tool: 'shop_order_status', arguments: { orderId: 'A17' }, result: 'order A17: shipped, arriving 2026-11-25' }]);
    expect(res.body.data.reply).toContain('shipped');
  });

  it('pauses a call to an MCP tool that needs approval, and runs it once approved', async () => {
    const created = await agentWith([mcpTool({ allowedTools: ['order_status'], requireApproval: true })]);
    const paused = await call(app, 'POST', `/v1/agents/${created.id}/converse`, { key: t.apiKey, body: { message: 'What is the delivery status of order A17?' } });
    expect(paused.body.data).toMatchObject({ status: 'requires_action', pendingToolCalls: [{ tool: 'shop_order_status', arguments: { orderId: 'A17' } }] });
    const calls = mcp.methods.filter((m) => m === 'tools/call').length;
    const resumed = await call(app, 'POST', `/v1/agents/${created.id}/converse`, {
      key: t.apiKey,
      body: { context: { sessionId: paused.body.data.sessionId }, toolApprovals: [{ id: paused.body.data.pendingToolCalls[0].id, approved: true }] },
    });
    expect(resumed.status).toBe(200);
    expect(resumed.body.data.reply).toContain('shipped');
    expect(mcp.methods.filter((m) => m === 'tools/call').length).toBe(calls + 1);
  });
});
