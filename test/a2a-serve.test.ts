import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { SendMessageRequest, StreamResponse, TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory, type Client } from '@a2a-js/sdk/client';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endUserAuthInput, setEndUserAuth } from '../shared/identity';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { testLocal, testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/**
 * Cairn serving A2A: a running server on a real socket, driven by the official `@a2a-js/sdk`
 * client as another team's agent would drive it — card discovery, send (blocking, at once then
 * polled, streamed), approval as input-required, cancel, push notifications, the protocol's errors.
 */
const app = createLocalApp(testRt);
let server: ServerType;
let base = '';
let t: TestTenant;
let agentId = '';
let approverId = '';

/** What the push receiver got: each request's headers and body. */
const pushed: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
const receiver = createServer((req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString()));
  req.on('end', () => {
    pushed.push({ headers: req.headers, body });
    res.writeHead(200).end();
  });
});
/** The refund service the approver's tool calls. */
const refunds = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ refunded: true, amount: 42 })));
const portOf = (s: { address(): unknown }) => (s.address() as AddressInfo).port;

const withKey = (key: string): typeof fetch => (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), 'x-api-key': key } });
async function clientOf(agent: string, transport: 'jsonrpc' | 'rest' = 'jsonrpc', key = t.apiKey): Promise<Client> {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [transport === 'jsonrpc' ? new JsonRpcTransportFactory({ fetchImpl: withKey(key) }) : new RestTransportFactory({ fetchImpl: withKey(key) })],
      preferredTransports: [transport === 'jsonrpc' ? 'JSONRPC' : 'HTTP+JSON'],
    }),
  );
  return factory.createFromUrl(`${base}/a2a/${agent}/`);
}
const ask = (text: string, extra: Record<string, unknown> = {}, configuration?: Record<string, unknown>) =>
  SendMessageRequest.fromJSON({ message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text }], ...extra }, ...(configuration ? { configuration } : {}) });
const replyOf = (task: Task) => task.artifacts[0]?.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
const rpc = async (body: unknown, key = t.apiKey) => {
  const response = await fetch(`${base}/a2a/${agentId}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as { result?: unknown; error?: { code: number; message: string } } };
};

beforeAll(async () => {
  server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  base = `http://127.0.0.1:${portOf(server)}`;
  await Promise.all([new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve)), new Promise<void>((resolve) => refunds.listen(0, '127.0.0.1', resolve))]);
  t = await newTenant();
  const ks = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'Handbook', type: 'file-collection', files: [{ path: 'returns.md', content: '# Returns\n\nItems can be returned within 30 days of delivery with the receipt.' }] } });
  await call(app, 'POST', `/v1/knowledge-sources/${ks.body.data.id}/connect`, { key: t.apiKey, body: {} });
  await testLocal.ingestion!.drain();
  agentId = (await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Support', description: 'Answers questions about returns', model: 'local/extractive', capabilities: ['chat', 'document-search'], knowledgeSourceIds: [ks.body.data.id], a2a: { enabled: true } } })).body.data.id;
  approverId = (
    await call(app, 'POST', '/v1/agents', {
      key: t.apiKey,
      body: {
        name: 'Refunds',
        model: 'local/extractive',
        a2a: { enabled: true },
        tools: [{ type: 'http', name: 'refund_order', description: 'Refunds an order', requireApproval: true, method: 'POST', url: `http://localhost:${portOf(refunds)}/refunds`, parameters: { type: 'object', properties: { orderId: { type: 'string', pattern: '^[A-Z][0-9]+$' } }, required: ['orderId'] } }],
      },
    })
  ).body.data.id;
});
afterAll(async () => {
  server.close();
  receiver.close();
  refunds.close();
});

describe('serving A2A', () => {
  it('publishes a card without a key, only for agents with a2a enabled', async () => {
    const card = await new DefaultAgentCardResolver().resolve(`${base}/a2a/${agentId}/`);
    expect(card).toMatchObject({ name: 'Support', description: 'Answers questions about returns', capabilities: { streaming: true, pushNotifications: true } });
    // The endpoint is named from where the server listens (localhost and its port), not from the Host a client sends.
    const endpoint = `http://localhost:${portOf(server)}/a2a/${agentId}`;
    expect(card.supportedInterfaces.map((i) => [i.protocolBinding, i.protocolVersion, i.url])).toEqual([
      ['JSONRPC', '1.0', endpoint],
      ['HTTP+JSON', '1.0', endpoint],
    ]);
    const forged = await fetch(`${base}/a2a/${agentId}/.well-known/agent-card.json`, { headers: { host: 'evil.example', 'x-forwarded-proto': 'https' } });
    expect(JSON.stringify(await forged.json())).not.toContain('evil.example');
    expect(card.skills.map((s) => s.id)).toEqual(['chat', 'knowledge']);
    // A client given the card's own URL finds it too (the SDK resolves the card against what it is given).
    expect((await new DefaultAgentCardResolver().resolve(`${base}/a2a/${agentId}/.well-known/agent-card.json`)).name).toBe('Support');
    expect(Object.keys(card.securitySchemes).sort()).toEqual(['apiKey', 'bearer']);
    expect((await new DefaultAgentCardResolver().resolve(`${base}/a2a/${approverId}/`)).skills.map((s) => s.id)).toEqual(['chat', 'tool-refund_order']);

    const hidden = (await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Internal', model: 'local/extractive' } })).body.data.id;
    expect((await fetch(`${base}/a2a/${hidden}/.well-known/agent-card.json`)).status).toBe(404);
    // Published, then withdrawn: its card goes.
    await call(app, 'PUT', `/v1/agents/${hidden}`, { key: t.apiKey, body: { name: 'Internal', model: 'local/extractive', a2a: { enabled: true } } });
    expect((await fetch(`${base}/a2a/${hidden}/.well-known/agent-card.json`)).status).toBe(200);
    await call(app, 'PUT', `/v1/agents/${hidden}`, { key: t.apiKey, body: { name: 'Internal', model: 'local/extractive' } });
    expect((await fetch(`${base}/a2a/${hidden}/.well-known/agent-card.json`)).status).toBe(404);
    // Its endpoint answers no one.
    expect((await rpc({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'run_x' } })).status).toBe(200);
    expect((await fetch(`${base}/a2a/${hidden}`, { method: 'POST', headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json' }, body: '{}' })).status).toBe(404);
  });

  it('answers a blocking send as a completed task whose artifact is the reply, continuing its context', async () => {
    const client = await clientOf(agentId);
    const task = (await client.sendMessage(ask('How long do I have to return an item?'))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.id).toMatch(/^run_/);
    expect(task.contextId).toMatch(/^ses_/);
    expect(replyOf(task)).toContain('30 days');
    const sources = task.artifacts[0]!.parts.find((p) => p.content?.$case === 'data')?.content?.value as { sources: Array<{ path: string }> };
    expect(sources.sources[0]!.path).toBe('returns.md');

    // A second message in the same context is another task of the same session.
    const next = (await client.sendMessage(ask('And do I need the receipt?', { contextId: task.contextId }))) as Task;
    expect(next.contextId).toBe(task.contextId);
    expect(next.id).not.toBe(task.id);
    const messages = (await call(app, 'GET', `/v1/agents/${agentId}/sessions/${task.contextId}/messages`, { key: t.apiKey })).body.data;
    expect(messages).toHaveLength(4);
    // Listed by context, newest first.
    const listed = await client.listTasks({ tenant: '', contextId: task.contextId, status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: '', statusTimestampAfter: undefined });
    expect(listed.tasks.map((x) => x.id)).toEqual([next.id, task.id]);
  });

  it('streams a task: the task, working, the reply as an artifact, completed', async () => {
    const client = await clientOf(agentId);
    const events: StreamResponse[] = [];
    for await (const event of client.sendMessageStream(ask('How long do I have to return an item?'))) events.push(event);
    expect(events.map((e) => e.payload?.$case)).toEqual(['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate']);
    const [first, working, artifact, done] = events.map((e) => e.payload!.value) as [Task, { status: { state: TaskState } }, { artifact: { parts: Array<{ content: { value: string } }> } }, { status: { state: TaskState } }];
    expect(first.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    expect(working.status.state).toBe(TaskState.TASK_STATE_WORKING);
    expect(artifact.artifact.parts[0]!.content.value).toContain('30 days');
    expect(done.status.state).toBe(TaskState.TASK_STATE_COMPLETED);

    // Subscribing again to the ended task gives the task as it ended, and ends.
    const again: StreamResponse[] = [];
    for await (const event of client.resubscribeTask({ tenant: '', id: first.id })) again.push(event);
    expect(again.map((e) => e.payload?.$case)).toEqual(['task']);
    expect((again[0]!.payload!.value as Task).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('returns a task at once when asked, to be polled; the same over HTTP+JSON', async () => {
    for (const transport of ['jsonrpc', 'rest'] as const) {
      const client = await clientOf(agentId, transport);
      const started = (await client.sendMessage(ask('How long do I have to return an item?', {}, { returnImmediately: true }))) as Task;
      expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(started.status?.state);
      let polled = started;
      for (let i = 0; i < 100 && polled.status?.state !== TaskState.TASK_STATE_COMPLETED; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        polled = await client.getTask({ tenant: '', id: started.id });
      }
      expect(polled.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(replyOf(polled)).toContain('30 days');
      expect(polled.history[0]!.parts[0]!.content).toEqual({ $case: 'text', value: 'How long do I have to return an item?' });

      // Or followed: a subscription to a task under way streams it to its end.
      const followed = (await client.sendMessage(ask('How long do I have to return an item?', {}, { returnImmediately: true }))) as Task;
      const events: StreamResponse[] = [];
      for await (const event of client.resubscribeTask({ tenant: '', id: followed.id })) events.push(event);
      expect(events[0]!.payload?.$case).toBe('task');
      const last = events.at(-1)!.payload!;
      expect(last.$case === 'task' ? last.value.status?.state : last.$case === 'statusUpdate' ? last.value.status?.state : undefined).toBe(TaskState.TASK_STATE_COMPLETED);
    }
  });

  it('asks for input when a call needs approval, goes on when approved, and cancels a waiting task once', async () => {
    const client = await clientOf(approverId);
    const waiting = (await client.sendMessage(ask('Please refund order A17'))) as Task;
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const asked = waiting.status!.message!.parts.find((p) => p.content?.$case === 'data')!.content!.value as { pendingToolCalls: Array<{ tool: string; arguments: Record<string, unknown> }> };
    expect(asked.pendingToolCalls).toEqual([expect.objectContaining({ tool: 'refund_order', arguments: { orderId: 'A17' } })]);
    const approved = (await client.sendMessage(ask('approve', { taskId: waiting.id, contextId: waiting.contextId }))) as Task;
    expect(approved.id).toBe(waiting.id);
    expect(approved.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(replyOf(approved)).toContain('42');

    const second = (await client.sendMessage(ask('Please refund order B22'))) as Task;
    expect(second.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const cancelled = await client.cancelTask({ tenant: '', id: second.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await expect(client.cancelTask({ tenant: '', id: second.id, metadata: undefined })).rejects.toMatchObject({ name: 'TaskNotCancelableError' });
  });

  it('pushes the finished task to the client’s URL with its token', async () => {
    const client = await clientOf(agentId);
    const task = (await client.sendMessage(ask('How long do I have to return an item?', {}, { returnImmediately: true, taskPushNotificationConfig: { url: `http://localhost:${portOf(receiver)}/hook`, token: 'tok-secret-123' } }))) as Task;
    for (let i = 0; i < 200 && !pushed.some((p) => p.body.includes(task.id) && p.body.includes('TASK_STATE_COMPLETED')); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    const delivered = pushed.find((p) => p.body.includes(task.id))!;
    expect(delivered.headers['x-a2a-notification-token']).toBe('tok-secret-123');
    expect(delivered.headers['content-type']).toBe('application/a2a+json');
    const notified = StreamResponse.fromJSON(JSON.parse(delivered.body));
    expect(notified.payload?.$case).toBe('task');
    expect((notified.payload!.value as Task).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // The config is listed without its token.
    const configs = await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' });
    expect(configs.configs).toEqual([expect.objectContaining({ taskId: task.id, url: `http://localhost:${portOf(receiver)}/hook`, token: '' })]);
    // The server's own services are refused as a target, by any name.
    const store = new URL(process.env.DYNAMODB_ENDPOINT!);
    await expect(client.createTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'own', url: `http://localhost:${store.port}/`, token: '', authentication: undefined })).rejects.toMatchObject({ name: 'RequestMalformedError', message: expect.stringContaining('own') });
  });

  it('answers with the protocol’s errors, and 401 without a valid key', async () => {
    expect((await rpc({ jsonrpc: '2.0', id: 1, method: 'NoSuchMethod', params: {} })).body.error?.code).toBe(-32601);
    expect((await rpc({ jsonrpc: '2.0', id: 2, method: 'SendMessage', params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [] } } })).body.error?.code).toBe(-32602);
    expect((await rpc({ jsonrpc: '2.0', id: 3, method: 'GetTask', params: { id: 'run_01jd8x2k3m4n5p6q7r8s9t0v1w' } })).body.error?.code).toBe(-32001);
    expect((await fetch(`${base}/a2a/${agentId}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(401);
    expect((await fetch(`${base}/a2a/${agentId}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'cairn_nope' }, body: '{}' })).status).toBe(401);
    // Another tenant's key finds no such agent.
    const stranger = await newTenant();
    expect((await rpc({ jsonrpc: '2.0', id: 4, method: 'GetTask', params: { id: 'run_x' } }, stranger.apiKey)).status).toBe(404);
  });
});

describe('A2A tasks per end user, and the protocol’s rules on requests', () => {
  const SECRET = 'an-hs256-secret-for-the-a2a-end-user-tests!!';
  const tokenFor = (sub: string) => new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setIssuer('https://id.example.test/').setAudience('cairn').setExpirationTime('5m').sign(new TextEncoder().encode(SECRET));
  const rpcAs = async (body: unknown, token?: string) => {
    const response = await fetch(`${base}/a2a/${agentId}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': t.apiKey, ...(token ? { 'x-end-user-token': token } : {}) }, body: JSON.stringify(body) });
    return (await response.json()) as { id?: unknown; result?: Record<string, unknown> & { tasks?: Array<{ id: string }> }; error?: { code: number; message: string } };
  };
  const send = (text: string, token?: string, extra: Record<string, unknown> = {}) =>
    rpcAs({ jsonrpc: '2.0', id: 'send', method: 'SendMessage', params: { message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text }], ...extra }, configuration: { returnImmediately: true } } }, token);
  beforeAll(async () => {
    await setEndUserAuth(testRt, t.scope, endUserAuthInput.parse({ issuer: 'https://id.example.test/', audience: 'cairn', hs256Secret: SECRET }));
  });

  it('gives a task to the end user who started it: another gets, lists, cancels and configures nothing of it', async () => {
    const [alice, bob] = [await tokenFor('alice'), await tokenFor('bob')];
    const started = await send('How long do I have to return an item?', alice);
    const taskId = (started.result!.task as { id: string }).id;
    expect((await rpcAs({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: taskId } }, alice)).result?.id).toBe(taskId);
    expect((await rpcAs({ jsonrpc: '2.0', id: 2, method: 'ListTasks', params: {} }, alice)).result?.tasks?.map((task) => task.id)).toContain(taskId);
    for (const token of [bob, undefined]) {
      expect((await rpcAs({ jsonrpc: '2.0', id: 3, method: 'GetTask', params: { id: taskId } }, token)).error?.code).toBe(-32001);
      expect((await rpcAs({ jsonrpc: '2.0', id: 4, method: 'ListTasks', params: {} }, token)).result?.tasks?.map((task) => task.id)).not.toContain(taskId);
      expect((await rpcAs({ jsonrpc: '2.0', id: 5, method: 'CancelTask', params: { id: taskId } }, token)).error?.code).toBe(-32001);
      expect((await rpcAs({ jsonrpc: '2.0', id: 6, method: 'CreateTaskPushNotificationConfig', params: { taskId, url: `http://localhost:${portOf(receiver)}/` } }, token)).error?.code).toBe(-32001);
    }
  });

  it('keeps a context the client names, for its end user only', async () => {
    const [alice, bob] = [await tokenFor('alice'), await tokenFor('bob')];
    const first = await send('How long do I have to return an item?', alice, { contextId: 'client-chosen-context-1' });
    expect(first.error, JSON.stringify(first)).toBeUndefined();
    expect((first.result!.task as { contextId: string }).contextId).toBe('client-chosen-context-1');
    // At once, while alice's first task may still run (nothing of it written to the session yet): the context is hers already.
    expect((await send('Hello', bob, { contextId: 'client-chosen-context-1' })).error).toMatchObject({ code: -32602, message: expect.stringContaining('another end user') });
    expect((await send('Hello', undefined, { contextId: 'client-chosen-context-1' })).error).toMatchObject({ code: -32602, message: expect.stringContaining('another end user') });
    const again = await send('And with the receipt?', alice, { contextId: 'client-chosen-context-1' });
    expect((again.result!.task as { contextId: string }).contextId).toBe('client-chosen-context-1');
    expect((await send('Hello', bob, { contextId: 'client-chosen-context-1' })).error).toMatchObject({ code: -32602, message: expect.stringContaining('another end user') });
    // A context of no end user is no user's to take.
    expect((await send('Hi', undefined, { contextId: 'client-chosen-context-2' })).error).toBeUndefined();
    expect((await send('Hi', alice, { contextId: 'client-chosen-context-2' })).error?.code).toBe(-32602);
    // An id of Cairn's own making that this agent did not give (another agent's context) is refused.
    expect((await send('Hello', alice, { contextId: 'ses_01jd8x2k3m4n5p6q7r8s9t0v1w' })).error?.code).toBe(-32602);
    expect((await send('Hello', alice, { contextId: 'not a context!' })).error?.code).toBe(-32602);
  });

  it('answers parse errors with -32700, requests that are not JSON-RPC with -32600, and bad ListTasks parameters with -32602 naming them', async () => {
    const raw = async (body: string) => (await (await fetch(`${base}/a2a/${agentId}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': t.apiKey }, body })).json()) as { id: unknown; error?: { code: number; message: string } };
    expect((await raw('{"jsonrpc": "2.0", "id": 1, "method":')).error?.code).toBe(-32700);
    expect(await raw('{"jsonrpc": "1.0", "id": 7, "method": "GetTask", "params": {"id": "x"}}')).toMatchObject({ id: 7, error: { code: -32600 } });
    expect((await raw('{"jsonrpc": "2.0", "id": 8, "params": {}}')).error?.code).toBe(-32600);
    expect((await raw('[1, 2]')).error?.code).toBe(-32600);
    expect((await raw('"GetTask"')).error?.code).toBe(-32600);
    const list = (params: Record<string, unknown>) => rpcAs({ jsonrpc: '2.0', id: 9, method: 'ListTasks', params });
    for (const [params, name] of [[{ status: 'TASK_STATE_BOGUS' }, 'status'], [{ pageSize: 0 }, 'pageSize'], [{ pageSize: 101 }, 'pageSize'], [{ historyLength: -1 }, 'historyLength'], [{ statusTimestampAfter: 'yesterday' }, 'statusTimestampAfter']] as const) {
      expect((await list(params)).error, JSON.stringify(params)).toMatchObject({ code: -32602, message: expect.stringContaining(name) });
    }
    expect((await list({ pageSize: 100, statusTimestampAfter: '2026-01-01T00:00:00Z' })).error).toBeUndefined();
    const rest = await fetch(`${base}/a2a/${agentId}/tasks?pageSize=0`, { headers: { 'x-api-key': t.apiKey } });
    expect(rest.status).toBe(400);
  });
});
