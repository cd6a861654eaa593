import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { testLocal, testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';
import { makePdf } from './helpers/documents';

/**
 * Cairn's own MCP endpoint, served on a real socket, driven by the official MCP client as Claude
 * Desktop or Cursor would drive it.
 */
const app = createLocalApp(testRt);
let server: ServerType;
let base = '';
let t: TestTenant;
let other: TestTenant;
let agentId = '';
let sourceId = '';
let workflowId = '';

async function connect(headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } }));
  return client;
}
const textOf = (result: Awaited<ReturnType<Client['callTool']>>) => (result.content as Array<{ type: string; text: string }>).map((c) => c.text).join('\n');

beforeAll(async () => {
  server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  [t, other] = await Promise.all([newTenant(), newTenant()]);
  const ks = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'Handbook', type: 'file-collection', files: [{ path: 'returns.md', content: '# Returns\n\nItems can be returned within 30 days of delivery with the receipt.' }, { path: 'warranty.pdf', contentBase64: Buffer.from(await makePdf([{ lines: ['Cover page.'] }, { heading: 'Warranty', lines: ['The warranty covers two years of use.'] }])).toString('base64') }] } });
  sourceId = ks.body.data.id;
  await call(app, 'POST', `/v1/knowledge-sources/${sourceId}/connect`, { key: t.apiKey, body: {} });
  await testLocal.ingestion!.drain();
  agentId = (await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Support', description: 'Answers customers', model: 'gpt-4', capabilities: ['chat', 'document-search'], knowledgeSourceIds: [sourceId] } })).body.data.id;
  workflowId = (await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body: { name: 'Echo', steps: [{ type: 'generation', config: { model: 'gpt-4', prompt: 'Repeat: {{user_message}}' } }] } })).body.data.id;
});
afterAll(async () => {
  server.close();
});

describe('the /mcp endpoint', () => {
  it('lists the tenant’s tools to the official MCP client, with an API key as X-API-Key or Bearer', async () => {
    for (const headers of [{ 'x-api-key': t.apiKey }, { authorization: `Bearer ${t.apiKey}` }] as Array<Record<string, string>>) {
      const client = await connect(headers);
      expect(client.getServerVersion()?.name).toBe('cairn');
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(['ask_agent', 'get_execution', 'get_run', 'list_agents', 'list_knowledge_sources', 'list_workflows', 'run_agent', 'run_workflow', 'search_knowledge']);
      expect(tools.find((tool) => tool.name === 'ask_agent')!.inputSchema).toMatchObject({ properties: { agentId: { type: 'string' }, message: { type: 'string' } }, required: ['agentId', 'message'] });
      await client.close();
    }
  });

  it('asks an agent, continues its session, searches knowledge and runs a workflow', async () => {
    const client = await connect({ 'x-api-key': t.apiKey });
    expect(textOf(await client.callTool({ name: 'list_agents', arguments: {} }))).toContain(`${agentId} — Support: Answers customers`);
    expect(textOf(await client.callTool({ name: 'list_knowledge_sources', arguments: {} }))).toContain(`${sourceId} — Handbook [ready]`);

    const asked = textOf(await client.callTool({ name: 'ask_agent', arguments: { agentId, message: 'How long do I have to return an item?' } }));
    expect(asked).toContain('30 days');
    expect(asked).toContain('returns.md');
    const sessionId = /\(session (ses_\w+)\)/.exec(asked)![1]!;
    await client.callTool({ name: 'ask_agent', arguments: { agentId, message: 'And do I need the receipt?', sessionId } });
    const messages = await call(app, 'GET', `/v1/agents/${agentId}/sessions/${sessionId}/messages`, { key: t.apiKey });
    expect(messages.body.data).toHaveLength(4); // both turns in one Cairn session
    expect(asked).toContain('(agent version draft)');
    // A release, named as the OpenAI-compatible routes name it.
    await call(app, 'POST', `/v1/agents/${agentId}/versions`, { key: t.apiKey, body: {} });
    await call(app, 'PUT', `/v1/agents/${agentId}/aliases/live`, { key: t.apiKey, body: { routing: [{ version: 1 }] } });
    expect(textOf(await client.callTool({ name: 'ask_agent', arguments: { agentId: `${agentId}:live`, message: 'How long do I have to return an item?' } }))).toContain('(agent version 1)');
    const badRelease = await client.callTool({ name: 'ask_agent', arguments: { agentId: `${agentId}:Not An Alias`, message: 'hello' } });
    expect(badRelease.isError).toBe(true);

    const found = textOf(await client.callTool({ name: 'search_knowledge', arguments: { knowledgeSourceId: sourceId, query: 'return window', topK: 1 } }));
    expect(found).toMatch(/^\[1\] .*returns\.md.*\n.*within 30 days/s);
    // A passage of a PDF is cited with its page.
    expect(textOf(await client.callTool({ name: 'search_knowledge', arguments: { knowledgeSourceId: sourceId, query: 'warranty years', topK: 1 } }))).toMatch(/^\[1\] .*\(warranty\.pdf p\. 2, score/);

    // A job in the background: started, then followed to its reply.
    const started = textOf(await client.callTool({ name: 'run_agent', arguments: { agentId, message: 'How long do I have to return an item?' } }));
    const runId = /Run (run_\w+)/.exec(started)![1]!;
    await testLocal.workflowSteps!.drain();
    expect(textOf(await client.callTool({ name: 'get_run', arguments: { agentId, runId } }))).toContain('30 days');

    const ran = textOf(await client.callTool({ name: 'run_workflow', arguments: { workflowId, input: 'hello there' } }));
    const executionId = /\(execution (exe_\w+)\)/.exec(ran)![1]!;
    expect(textOf(await client.callTool({ name: 'get_execution', arguments: { workflowId, executionId } }))).toContain(`(execution ${executionId})`);
    await client.close();
  });

  it('reports mistakes as tool errors the client can read, and never reaches another tenant’s records', async () => {
    const client = await connect({ 'x-api-key': other.apiKey });
    const foreign = await client.callTool({ name: 'ask_agent', arguments: { agentId, message: 'hello' } });
    expect(foreign.isError).toBe(true);
    expect(textOf(foreign)).toMatch(/agent .* not found/i);
    expect(textOf(await client.callTool({ name: 'list_agents', arguments: {} }))).toBe('No agents.');
    const bad = await client.callTool({ name: 'search_knowledge', arguments: { knowledgeSourceId: sourceId, query: '' } });
    expect(bad.isError).toBe(true);
    await client.close();
  });

  it('refuses a missing or unknown key with 401 before any MCP exchange', async () => {
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    expect((await fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify(init) })).status).toBe(401);
    expect((await fetch(`${base}/mcp`, { method: 'POST', headers: { ...headers, 'x-api-key': 'ck_live_nope' }, body: JSON.stringify(init) })).status).toBe(401);
    const ok = await fetch(`${base}/mcp`, { method: 'POST', headers: { ...headers, 'x-api-key': t.apiKey }, body: JSON.stringify(init) });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-ratelimit-limit')).not.toBeNull(); // counted against the agents area
    expect(((await ok.json()) as { result: { serverInfo: { name: string } } }).result.serverInfo.name).toBe('cairn');
  });

  it('answers JSON-RPC mistakes with JSON-RPC errors, never a 5xx', async () => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': t.apiKey };
    const send = async (body: unknown) => {
      const res = await fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.text()) };
    };
    const unknownMethod = await send({ jsonrpc: '2.0', id: 1, method: 'tools/teleport', params: {} });
    expect(unknownMethod.status).toBeLessThan(500);
    expect(JSON.parse(unknownMethod.body)).toMatchObject({ jsonrpc: '2.0', id: 1, error: { code: -32601 } });
    const unknownTool = await send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'teleport', arguments: {} } });
    expect(unknownTool.status).toBeLessThan(500);
    expect(unknownTool.body).toMatch(/teleport/);
    const badArguments = await send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'ask_agent', arguments: { agentId: 5 } } });
    expect(badArguments.status).toBeLessThan(500);
    expect(badArguments.body).toMatch(/agentId/);
    const notJsonRpc = await send({ hello: 'world' });
    expect(notJsonRpc.status).toBe(400);
    // A GET for a server-sent stream: this endpoint keeps no session to stream from.
    expect((await fetch(`${base}/mcp`, { headers: { ...headers, accept: 'text/event-stream' } })).status).toBe(405);
  });
});

describe('the /mcp endpoint against DNS rebinding', () => {
  const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
  /** A raw request, so Host and Origin are exactly as a rebinding page's browser would send them. */
  const post = (headers: Record<string, string>) =>
    new Promise<number>((resolve, reject) => {
      const port = (server.address() as AddressInfo).port;
      const req = request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': t.apiKey, host: `localhost:${port}`, ...headers } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end(init);
    });

  it('answers 403 to an Origin it does not allow and to a Host that is not this server, and serves its own and allowed ones', async () => {
    const port = (server.address() as AddressInfo).port;
    expect(await post({ origin: 'https://evil.example' })).toBe(403);
    expect(await post({ host: `evil.example:${port}` })).toBe(403);
    expect(await post({ host: `evil.example:${port}`, origin: `http://evil.example:${port}` })).toBe(403);
    expect(await post({ host: `localhost:${port + 1}` })).toBe(403);
    expect(await post({})).toBe(200);
    expect(await post({ host: `127.0.0.1:${port}`, origin: `http://localhost:${port}` })).toBe(200);
    // CORS_ORIGINS allows https://console.example in the tests.
    expect(await post({ origin: 'https://console.example' })).toBe(200);
    // In-process (as API Gateway delivers it) only the Origin is checked.
    expect((await call(app, 'POST', '/mcp', { key: t.apiKey, headers: { origin: 'https://evil.example', accept: 'application/json, text/event-stream' }, body: JSON.parse(init) })).status).toBe(403);
  });
});
