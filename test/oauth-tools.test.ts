import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { SendMessageRequest, TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { converse, taskOf, textOf } from '../shared/agents';
import type { Runtime } from '../shared/runtime';
import { createRemoteJWKSet, jwtVerify, SignJWT } from 'jose';
import { chatStandIn } from './helpers/chat-stand-in';
import { call } from './helpers/http';
import { startShopMcp } from './helpers/mcp-server';
import { pcall, provision } from './helpers/platform';
import { RESOURCE, startOidcServer, type OidcServer } from './helpers/oidc-server';
import { localRuntimeWith, modelsWithStandIn, runtimeLater, testPlatformSecrets } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/**
 * Tools that act as the end user: an agent's `http` tool with `auth: {type: "oauth2"}` calls a
 * resource server (which checks tokens with `jose`) with the end user's own token from a real
 * authorization server (`oidc-provider`), whose login and consent the test drives. A turn whose
 * user has not connected pauses with an authorization URL; the callback, then `resume: true`,
 * carries it on. An OpenAI-compatible stand-in at the wire plays the model: it calls `my_events`
 * when it has it, and answers with what the tool said.
 */
const CALLBACK = 'http://localhost/v1/oauth/callback';
const model = chatStandIn((body) => {
  const last = body.messages.at(-1)!;
  const names = body.tools?.map((t) => t.function.name) ?? [];
  const asked = body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
  // Asked about an order: the shop's order_status once it is listed, else the tool that connects to it; asked anything else: my_events.
  const wanted = /order/.test(asked) ? (names.includes('shop_order_status') ? 'shop_order_status' : 'shop') : 'my_events';
  const calls = names.includes(wanted) && (last.role !== 'tool' || /available from the next step/.test(last.content ?? ''));
  if (calls) return { call: { id: `call_${body.messages.length}`, name: wanted, arguments: wanted === 'shop_order_status' ? { orderId: 'A17' } : {} } };
  return { text: last.role === 'tool' ? `The calendar says: ${last.content}` : 'I cannot see calendars.' };
});

let idp: OidcServer;
let rt: Runtime;
let local: ReturnType<typeof localRuntimeWith>;
let t: TestTenant;
let agentId: string;
const api = (method: string, path: string, body?: unknown, on: Runtime = rt) => call(createLocalApp(on), method, path, { key: t.apiKey, ...(body === undefined ? {} : { body }) });
const ask = (userId: string, extra: Record<string, unknown> = {}, on: Runtime = rt) => api('POST', `/v1/agents/${agentId}/converse`, { message: 'What is on my calendar?', context: { userId }, ...extra }, on);
const resume = (sessionId: string) => api('POST', `/v1/agents/${agentId}/converse`, { context: { sessionId }, resume: true });
/** The end user opens the URL, signs in as `accountId` and consents; their browser lands on Cairn's callback. */
async function connectAt(url: string, accountId: string) {
  const back = await idp.login(url, accountId);
  expect(`${back.origin}${back.pathname}`).toBe(CALLBACK);
  return call(createLocalApp(rt), 'GET', `${back.pathname}${back.search}`);
}
const refreshes = () => idp.grants.filter((g) => g === 'refresh_token').length;
/** A JWT (the shape of the provider's tokens): none may show anywhere Cairn answers. */
const JWT = /eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/;

beforeAll(async () => {
  await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
  idp = await startOidcServer({ redirectUri: CALLBACK });
  local = localRuntimeWith(modelsWithStandIn(model));
  await local.start();
  rt = local.rt;
  t = await newTenant();
  const provider = await api('POST', '/v1/oauth-providers', { name: 'calendar', issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, scopes: ['openid', 'offline_access'], extraAuthorizeParams: { prompt: 'consent', resource: RESOURCE } });
  expect(provider.status, JSON.stringify(provider.body)).toBe(201);
  const tool = { type: 'http', name: 'my_events', description: 'The end user’s calendar events', url: `${idp.resource}/events`, auth: { type: 'oauth2', provider: 'calendar', scopes: ['calendar.read'] } };
  const agent = await api('POST', '/v1/agents', { name: 'Assistant', model: 'openai/gpt-4o', tools: [tool] });
  expect(agent.status, JSON.stringify(agent.body)).toBe(201);
  agentId = agent.body.data.id;
});
afterAll(async () => {
  await local.stop();
  await idp.close();
  await new Promise<void>((resolve) => model.close(() => resolve()));
});

describe('a tool with the end user’s OAuth token', () => {
  it('is stored naming its provider (none other), and shown without anything secret', async () => {
    const shown = await api('GET', `/v1/agents/${agentId}`);
    expect(shown.body.data.tools[0].auth).toEqual({ type: 'oauth2', provider: 'calendar', scopes: ['calendar.read'], configured: true });
    const unknown = await api('POST', '/v1/agents', { name: 'X', model: 'openai/gpt-4o', tools: [{ type: 'http', name: 'x', description: 'x', url: `${idp.resource}/events`, auth: { type: 'oauth2', provider: 'mail' } }] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details.field).toBe('tools[0].auth.provider');
  });

  it('pauses a turn for the end user to connect, and goes on with their token once they have', async () => {
    const paused = await ask('u-ana');
    expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    expect(paused.body.data.status).toBe('requires_action');
    const [action] = paused.body.data.requiredActions;
    expect(action).toEqual({ type: 'authorization', provider: 'calendar', url: expect.stringContaining(`${idp.issuer}/auth?`) });
    const url = new URL(action.url);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('scope')).toContain('calendar.read');
    expect(url.searchParams.get('redirect_uri')).toBe(CALLBACK);
    expect(paused.body.data.pendingToolCalls).toEqual([expect.objectContaining({ tool: 'my_events', asks: 'Connect your calendar account' })]);
    const { sessionId } = paused.body.data;
    const before = idp.calls.length;

    // The conversation cannot go on past the paused turn; resuming before connecting waits again, with a new URL.
    const blocked = await api('POST', `/v1/agents/${agentId}/converse`, { message: 'hello?', context: { sessionId, userId: 'u-ana' } });
    expect(blocked.status).toBe(409);
    expect(blocked.body.error.message).toContain('resume: true');
    expect(blocked.body.error.details.requiredActions).toEqual([expect.objectContaining({ type: 'authorization', provider: 'calendar' })]);
    const early = await resume(sessionId);
    expect(early.body.data.status).toBe('requires_action');
    const again = early.body.data.requiredActions[0].url;
    expect(again).not.toBe(action.url);
    expect(idp.calls.length).toBe(before);

    const landed = await connectAt(again, 'u-ana');
    expect(landed.status).toBe(200);
    expect(landed.body).toContain('Account connected');
    const done = await resume(sessionId);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.data.status).toBe('completed');
    expect(done.body.data.reply).toContain('Dentist for u-ana');
    expect(idp.calls.at(-1)).toEqual({ sub: 'u-ana' });
    expect((await resume(sessionId)).status).toBe(409);

    // The token is nowhere Cairn answers: the reply, its tool calls, the stored session, its trace.
    const messages = await api('GET', `/v1/agents/${agentId}/sessions/${sessionId}/messages`);
    const trace = await api('GET', `/v1/traces/${done.headers.get('x-request-id')}`);
    expect(messages.status).toBe(200);
    expect(trace.status, JSON.stringify(trace.body)).toBe(200);
    expect(JSON.stringify(trace.body)).toContain('execute_tool my_events');
    for (const shown of [paused.body, done.body, messages.body, trace.body]) expect(JSON.stringify(shown)).not.toMatch(JWT);
  });

  it('keeps two end users apart: one’s connection never serves the other', async () => {
    const bob = await ask('u-bob');
    expect(bob.body.data.status).toBe('requires_action');
    await connectAt(bob.body.data.requiredActions[0].url, 'u-bob');
    const done = await resume(bob.body.data.sessionId);
    expect(done.body.data.reply).toContain('Dentist for u-bob');
    expect(done.body.data.reply).not.toContain('u-ana');
    expect(idp.calls.at(-1)).toEqual({ sub: 'u-bob' });
    const ana = await ask('u-ana');
    expect(ana.body.data.reply).toContain('Dentist for u-ana');
    expect(idp.calls.at(-1)).toEqual({ sub: 'u-ana' });
  });

  it('refreshes a token the API refuses and calls once more; refreshes an expired token before use', async () => {
    const refreshed = refreshes();
    idp.refuseNext = 1;
    const retried = await ask('u-ana');
    expect(retried.body.data.reply).toContain('Dentist for u-ana');
    expect(refreshes()).toBe(refreshed + 1);
    expect(idp.calls.slice(-2)).toEqual([{ refused: 'token refused by the API' }, { sub: 'u-ana' }]);

    // Refused again after the refresh: the call fails (the model is told), it does not loop.
    idp.refuseNext = 2;
    const refused = await ask('u-ana');
    expect(refused.body.data.status).toBe('completed');
    expect(refused.body.data.toolCalls[0].error).toContain('HTTP 401');
    expect(refreshes()).toBe(refreshed + 2);

    // An hour later the access token has expired: refreshed first, then the call is made once.
    const calls = idp.calls.length;
    const later = await ask('u-ana', {}, runtimeLater(rt, 3_600_000));
    expect(later.body.data.reply).toContain('Dentist for u-ana');
    expect(refreshes()).toBe(refreshed + 3);
    expect(idp.calls.length).toBe(calls + 1);
  });

  it('gives an OpenAPI tool’s operations the end user’s token, refreshed on a 401 the same way', async () => {
    const document = { openapi: '3.1.0', info: { title: 'Calendar', version: '1' }, paths: { '/events': { get: { operationId: 'events', summary: 'The user’s events' } } } };
    const agent = await api('POST', '/v1/agents', { name: 'OpenAPI assistant', model: 'openai/gpt-4o', tools: [{ type: 'openapi', name: 'my', document, baseUrl: idp.resource, auth: { type: 'oauth2', provider: 'calendar' } }] });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
    const refreshed = refreshes();
    idp.refuseNext = 1;
    const res = await api('POST', `/v1/agents/${agent.body.data.id}/converse`, { message: 'What is on my calendar?', context: { userId: 'u-ana' } });
    expect(res.body.data.toolCalls.map((c: { tool: string }) => c.tool)).toEqual(['my_events']);
    expect(res.body.data.reply).toContain('Dentist for u-ana');
    expect(refreshes()).toBe(refreshed + 1);
    expect(idp.calls.slice(-2)).toEqual([{ refused: 'token refused by the API' }, { sub: 'u-ana' }]);
  });

  it('asks again once the connection is gone; where a turn cannot pause, the model is given the link', async () => {
    expect((await api('DELETE', '/v1/end-users/u-bob/connections/calendar')).body.data).toMatchObject({ removed: true, revoked: true });
    const paused = await ask('u-bob');
    expect(paused.body.data.status).toBe('requires_action');
    expect(paused.body.data.requiredActions[0].provider).toBe('calendar');

    // OpenAI-style (the caller keeps the history): nothing can wait, so the tool's error hands the model the URL to pass on.
    const { data } = await converse(rt, t.scope, agentId, { message: 'What is on my calendar?', history: [], userId: 'u-bob', callbackUrl: CALLBACK });
    expect(data.status).toBe('completed');
    expect(data.reply).toContain(`ask them to open ${idp.issuer}/auth?`);
  });

  it('without an end user, the call fails saying the tool acts as one', async () => {
    const res = await api('POST', `/v1/agents/${agentId}/converse`, { message: 'What is on my calendar?' });
    expect(res.body.data.status).toBe('completed');
    expect(res.body.data.toolCalls[0].error).toContain('names no end user');
  });

  it('pauses a background run, which goes on by itself once the end user has connected', async () => {
    const created = await api('POST', `/v1/agents/${agentId}/runs`, { message: 'What is on my calendar?', context: { userId: 'u-cy' } });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const runId = created.body.data.id;
    const until = async (status: string) => {
      for (let i = 0; i < 200; i++) {
        const run = (await api('GET', `/v1/agents/${agentId}/runs/${runId}`)).body.data;
        if (run.status === status) return run;
        if (['completed', 'failed', 'cancelled', 'expired'].includes(run.status)) throw new Error(`run ended ${run.status}: ${JSON.stringify(run)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`run never reached ${status}`);
    };
    const waiting = await until('requires_action');
    expect(waiting.requiredActions).toEqual([{ type: 'authorization', provider: 'calendar', url: expect.stringContaining(`${idp.issuer}/auth?`) }]);
    // As an A2A task, it waits for authorization (not for input), its status message naming where.
    const task = taskOf((await rt.store.runs.getRun(t.scope, agentId, runId))!);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
    expect(textOf(task.status!.message!)).toContain(`calendar at ${waiting.requiredActions[0].url}`);
    const landed = await connectAt(waiting.requiredActions[0].url, 'u-cy');
    expect(landed.status).toBe(200);
    const done = await until('completed');
    expect(done.reply).toContain('Dentist for u-cy');
    expect(done.requiredActions).toBeUndefined();
    const events = await api('GET', `/v1/agents/${agentId}/runs/${runId}/events`);
    expect(String(events.body)).toContain('event: requires_action\ndata: {"pendingToolCalls"');
    expect(String(events.body)).toContain('"requiredActions":[{"type":"authorization","provider":"calendar"');
    expect(String(events.body)).not.toMatch(JWT);
  });

  it('lists an MCP server’s tools with the end user’s token, and before they connect gives the model one tool that asks them to', async () => {
    const keys = createRemoteJWKSet(new URL(`${idp.issuer}/jwks`));
    const subjects: string[] = [];
    const shop = await startShopMcp(async (bearer) => {
      if (!bearer) return false;
      const { payload } = await jwtVerify(bearer, keys, { issuer: idp.issuer, audience: RESOURCE }).catch(() => ({ payload: undefined }));
      if (payload?.sub) subjects.push(payload.sub);
      return payload !== undefined;
    });
    try {
      const agent = await api('POST', '/v1/agents', { name: 'Shop assistant', model: 'openai/gpt-4o', tools: [{ type: 'mcp', name: 'shop', url: shop.url, allowedTools: ['order_status'], auth: { type: 'oauth2', provider: 'calendar' } }] });
      expect(agent.status, JSON.stringify(agent.body)).toBe(201);
      const id = agent.body.data.id;
      const paused = await api('POST', `/v1/agents/${id}/converse`, { message: 'Where is my order A17?', context: { userId: 'u-gus' } });
      expect(paused.body.data.status).toBe('requires_action');
      expect(paused.body.data.pendingToolCalls[0].tool).toBe('shop');
      expect(subjects).toEqual([]);
      await connectAt(paused.body.data.requiredActions[0].url, 'u-gus');
      const done = await api('POST', `/v1/agents/${id}/converse`, { context: { sessionId: paused.body.data.sessionId }, resume: true });
      expect(done.body.data.status, JSON.stringify(done.body)).toBe('completed');
      // Connected, the server's own tools are listed for the next step, and the model calls one as the user.
      expect(done.body.data.toolCalls.map((c: { tool: string }) => c.tool)).toEqual(['shop', 'shop_order_status']);
      expect(done.body.data.reply).toContain('order A17: shipped');
      expect(new Set(subjects)).toEqual(new Set(['u-gus']));
    } finally {
      await shop.close();
    }
  });

  it('serves an A2A task that waits for the token’s user to connect (auth-required), and finishes it once they have', async () => {
    // A tenant whose end users sign in at an identity provider (HS256 here): A2A names its user by token only.
    const tenant = await provision(createLocalApp(rt), testPlatformSecrets.adminToken);
    const secret = 'an-hs256-secret-for-end-users-of-forty-chars';
    expect((await pcall(createLocalApp(rt), 'PUT', '/platform/end-user-auth', tenant.accessToken, { body: { issuer: 'https://id.example.test', audience: 'cairn', hs256Secret: secret } })).status).toBe(200);
    const userToken = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('u-hal').setIssuer('https://id.example.test').setAudience('cairn').setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode(secret));
    const as = (method: string, path: string, body: unknown) => call(createLocalApp(rt), method, path, { key: tenant.apiKey, body });
    // The API is served on another port here: the provider names the callback it registered.
    expect((await as('POST', '/v1/oauth-providers', { name: 'calendar', issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, scopes: ['openid', 'offline_access', 'calendar.read'], extraAuthorizeParams: { prompt: 'consent', resource: RESOURCE }, redirectUri: CALLBACK })).status).toBe(201);
    const tool = { type: 'http', name: 'my_events', description: 'The end user’s calendar events', url: `${idp.resource}/events`, auth: { type: 'oauth2', provider: 'calendar' } };
    const agent = (await as('POST', '/v1/agents', { name: 'Calendar', description: 'Reads your calendar', model: 'openai/gpt-4o', tools: [tool], a2a: { enabled: true } })).body.data.id;

    const server = serve({ fetch: createLocalApp(rt).fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    try {
      const headers = { 'x-api-key': tenant.apiKey, 'x-end-user-token': userToken };
      const withHeaders: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } });
      const client = await new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl: withHeaders })] })).createFromUrl(
        `http://127.0.0.1:${(server.address() as AddressInfo).port}/a2a/${agent}/`,
      );
      const message = SendMessageRequest.fromJSON({ message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'What is on my calendar?' }] } });
      const waiting = (await client.sendMessage(message)) as Task;
      expect(TaskState[waiting.status!.state]).toBe('TASK_STATE_AUTH_REQUIRED');
      const said = textOf(waiting.status!.message!);
      const url = /calendar at (\S+)\. The task goes on/.exec(said)?.[1];
      expect(url, said).toContain(`${idp.issuer}/auth?`);
      expect((await connectAt(url!, 'u-hal')).status).toBe(200);
      let task = waiting;
      for (let i = 0; i < 100 && task.status!.state !== TaskState.TASK_STATE_COMPLETED; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        task = await client.getTask({ tenant: '', id: waiting.id, historyLength: 0 });
      }
      expect(TaskState[task.status!.state]).toBe('TASK_STATE_COMPLETED');
      expect(task.artifacts[0]!.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('')).toContain('Dentist for u-hal');
      expect(idp.calls.at(-1)).toEqual({ sub: 'u-hal' });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('gives a workflow http step the execution’s end user’s token', async () => {
    const workflow = await api('POST', '/v1/workflows', { name: 'My events', steps: [{ id: 'events', type: 'http', config: { url: `${idp.resource}/events`, auth: { type: 'oauth2', provider: 'calendar' } } }] });
    expect(workflow.status, JSON.stringify(workflow.body)).toBe(201);
    const id = workflow.body.data.id;
    const ana = await api('POST', `/v1/workflows/${id}/execute`, { context: { userId: 'u-ana' } });
    type Step = { id: string; status: string; output?: { body: { owner: string } }; error?: unknown };
    const step = (e: { steps: Step[] }) => e.steps.find((s) => s.id === 'events')!;
    const settled = async (e: { id: string; status: string }) => {
      for (let i = 0; i < 200 && !['succeeded', 'failed'].includes(e.status); i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        e = (await api('GET', `/v1/workflows/${id}/executions/${e.id}`)).body.data;
      }
      return e as unknown as { status: string; steps: Step[] };
    };
    const done = await settled(ana.body.data);
    expect(done.status).toBe('succeeded');
    expect(step(done).output?.body.owner).toBe('u-ana');
    const dee = await settled((await api('POST', `/v1/workflows/${id}/execute`, { context: { userId: 'u-dee' } })).body.data);
    expect(dee.status).toBe('failed');
    expect(JSON.stringify(step(dee).error)).toContain('POST /v1/end-users/u-dee/connections/calendar');
  });
});
