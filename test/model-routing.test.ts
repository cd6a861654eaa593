import { randomBytes } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { localRuntime } from '../local/local-runtime';
import { modelResolver } from '../shared/models/resolve-model';
import { createDb } from '../shared/store/db';
import { call } from './helpers/http';
import { testPlatformSecrets } from './helpers/runtime';
import { parseSse } from './helpers/sse';
import { newTenant, type TestTenant } from './helpers/tenant';

/**
 * Models in production, at the wire: an OpenAI-compatible stand-in whose every model name is a way
 * to fail (429 with Retry-After, 500, 503, too slow, a 400 that must not fall back), an Anthropic
 * stand-in that answers from its prompt cache, and a provider whose port refuses connections. The
 * runtime's clock moves the circuit breakers through their cool-downs.
 */
const hits: Record<string, number> = {};
let flakyDown = true;

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

const openaiLike = createServer((req, res) => {
  let raw = '';
  req.on('data', (c: Buffer) => (raw += c.toString()));
  req.on('end', () => {
    const body = JSON.parse(raw) as { model: string; stream?: boolean };
    hits[body.model] = (hits[body.model] ?? 0) + 1;
    const fail = (status: number, message: string, headers: Record<string, string> = {}) => json(res, status, { error: { message, type: 'server_error', param: null, code: null } }, headers);
    if (body.model.startsWith('rate-limited')) return fail(429, 'Rate limit reached', { 'retry-after': '20' });
    if (body.model.startsWith('broken')) return fail(500, 'The server had an error while processing your request');
    if (body.model.startsWith('unavailable')) return fail(503, 'The engine is currently overloaded');
    if (body.model === 'too-long') return json(res, 400, { error: { message: "This model's maximum context length is 8192 tokens", type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } });
    if (body.model === 'flaky' && flakyDown) return fail(502, 'Bad gateway');
    const answer = () => {
      if (body.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: `From ${body.model}.` }, finish_reason: null }] })}\n\n`);
        res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 30, completion_tokens: 5 } })}\n\n`);
        return res.end('data: [DONE]\n\n');
      }
      json(res, 200, { id: 'chatcmpl-1', object: 'chat.completion', created: 1795255200, model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: `From ${body.model}.` }, finish_reason: 'stop' }], usage: { prompt_tokens: 30, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 0 } } });
    };
    if (body.model === 'slow') setTimeout(answer, 1500);
    else answer();
  });
});

// Anthropic's Messages API, answering with most of the prompt read from its cache.
const CLAUDE_USAGE = { input_tokens: 40, cache_creation_input_tokens: 0, cache_read_input_tokens: 1960, output_tokens: 12 };
const anthropicLike = createServer((req, res) => {
  let raw = '';
  req.on('data', (c: Buffer) => (raw += c.toString()));
  req.on('end', () => {
    const body = JSON.parse(raw) as { model: string; stream?: boolean };
    hits[body.model] = (hits[body.model] ?? 0) + 1;
    if (!body.stream) {
      return json(res, 200, { id: 'msg_1', type: 'message', role: 'assistant', model: body.model, content: [{ type: 'text', text: 'From Claude.' }], stop_reason: 'end_turn', stop_sequence: null, usage: CLAUDE_USAGE });
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const event = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    event('message_start', { message: { id: 'msg_2', type: 'message', role: 'assistant', content: [], model: body.model, stop_reason: null, usage: { ...CLAUDE_USAGE, output_tokens: 1 } } });
    event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'From Claude.' } });
    event('content_block_stop', { index: 0 });
    event('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 12 } });
    event('message_stop', {});
    res.end();
  });
});

const listen = (server: Server) => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
const offset = { ms: 0 };
let local: ReturnType<typeof localRuntime>;
let t: TestTenant;
const app = () => createLocalApp(local.rt);
const api = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => call(app(), method, path, { key: t.apiKey, ...(body === undefined ? {} : { body }), ...(headers ? { headers } : {}) });
const agentOn = async (model: string, fallbackModels?: string[]) => {
  const res = await api('POST', '/v1/agents', { name: 'Routed', model, ...(fallbackModels ? { fallbackModels } : {}) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.id as string;
};
const ask = (agentId: string) => api('POST', `/v1/agents/${agentId}/converse`, { message: 'How long do returns take?' });
/** A turn through the OpenAI surface: nothing stored, so no memory extraction asks the model again. */
const complete = async (agentId: string) => {
  const res = await api('POST', '/v1/chat/completions', { model: agentId, messages: [{ role: 'user', content: 'How long do returns take?' }] });
  return { ...res, model: res.body.cairn?.model as string | undefined };
};
const circuits = async () => (await call(app(), 'GET', '/platform/models', { headers: { authorization: `Bearer ${testPlatformSecrets.adminToken}` } })).body.data.circuits as Array<{ model: string; state: string }>;

beforeAll(async () => {
  const [openaiPort, anthropicPort] = await Promise.all([listen(openaiLike), listen(anthropicLike)]);
  // A port nothing listens on: connections to it are refused.
  const closed = createServer();
  const closedPort = await listen(closed);
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  local = localRuntime({
    db: createDb(),
    secretsKey: randomBytes(32),
    platformSecrets: testPlatformSecrets,
    queueNamespace: randomBytes(6).toString('hex'),
    clock: { now: () => Date.now() + offset.ms },
    models: modelResolver({
      keys: async () => ({}),
      providers: {
        wire: { type: 'openai-compatible', baseUrl: `http://127.0.0.1:${openaiPort}/v1`, timeoutMs: 300 },
        'wire-claude': { type: 'anthropic', baseUrl: `http://127.0.0.1:${anthropicPort}`, apiKey: 'sk-ant-test' },
        'wire-down': { type: 'openai-compatible', baseUrl: `http://127.0.0.1:${closedPort}/v1` },
      },
    }),
  });
  await local.start();
  t = await newTenant();
});
afterAll(async () => {
  await local.stop();
  await Promise.all([openaiLike, anthropicLike].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

describe('fallback chains', () => {
  it('falls back twice (a 500, then a refused connection) to the model that answers, and shows each attempt in the trace and in usage', async () => {
    const agentId = await agentOn('wire/broken', ['wire-down/llama', 'wire-claude/claude-test']);
    const turn = await complete(agentId);
    expect(turn.status, JSON.stringify(turn.body)).toBe(200);
    expect(turn.body.choices[0].message.content).toBe('From Claude.');
    expect(turn.model).toBe('wire-claude/claude-test');
    expect(turn.body.usage).toEqual({ prompt_tokens: 2000, completion_tokens: 12, total_tokens: 2012, prompt_tokens_details: { cached_tokens: 1960 } });
    // Each attempt is a span: the two failures with their errors, then the answer.
    const spans = (await api('GET', `/v1/traces/${turn.headers.get('x-request-id')}`)).body.data.spans as Array<{ name: string; status: string; attributes: Record<string, unknown> }>;
    const chats = spans.filter((s) => s.name.startsWith('chat '));
    expect(chats.map((s) => [s.name, s.status])).toEqual([['chat broken', 'error'], ['chat llama', 'error'], ['chat claude-test', 'ok']]);
    expect(chats[2]!.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 2000, 'gen_ai.usage.cache_read.input_tokens': 1960, 'gen_ai.usage.cache_creation.input_tokens': 0 });
    // Usage by model: each failed call against its model, the tokens against the one that answered, priced with its cached-input price.
    const rows = (await api('GET', '/v1/usage?groupBy=model')).body.data.rows as Array<Record<string, unknown>>;
    const row = (model: string) => rows.find((r) => r.group === model);
    expect(row('wire/broken')).toMatchObject({ requests: 1, failedRequests: 1, inputTokens: 0, estimatedCostUsd: 0 }); // unpriced, but no token was used
    expect(row('wire-down/llama')).toMatchObject({ requests: 1, failedRequests: 1 });
    expect(row('wire-claude/claude-test')).toMatchObject({ requests: 1, failedRequests: 0, inputTokens: 2000, cachedInputTokens: 1960, cacheWriteTokens: 0, outputTokens: 12 });
    // 40 plain input tokens at 0.003, 1,960 cached at 0.0003, 12 output at 0.015 (per 1,000).
    expect(row('wire-claude/claude-test')!.estimatedCostUsd).toBeCloseTo((40 * 0.003 + 1960 * 0.0003 + 12 * 0.015) / 1000, 9);
    // A Cairn session's reply names the model that answered, as stored.
    const kept = await ask(agentId);
    expect(kept.body.data).toMatchObject({ reply: 'From Claude.', model: 'wire-claude/claude-test', usage: { cachedInputTokens: 1960 } });
    const messages = (await api('GET', `/v1/agents/${agentId}/sessions/${kept.body.data.sessionId}/messages`)).body.data as Array<{ role: string; model?: string }>;
    expect(messages.find((m) => m.role === 'assistant')!.model).toBe('wire-claude/claude-test');
  });

  it('falls back on a 429, a 503, a time-out and a refused connection', async () => {
    for (const failing of ['wire/rate-limited', 'wire/unavailable', 'wire/slow', 'wire-down/any']) {
      const turn = await ask(await agentOn(failing, ['wire/ok']));
      expect(turn.status, failing).toBe(200);
      expect(turn.body.data.model, failing).toBe('wire/ok');
      expect(turn.body.data.reply, failing).toBe('From ok.');
    }
  });

  it('does not fall back on a 400: the request would be refused again, and the error is returned as it was', async () => {
    const before = hits.ok ?? 0;
    const turn = await ask(await agentOn('wire/too-long', ['wire/ok', 'local/extractive']));
    expect(turn.status).toBe(502);
    expect(turn.body.error).toMatchObject({ code: 'UPSTREAM_ERROR', details: { provider: 'wire', status: 400, providerMessage: "This model's maximum context length is 8192 tokens" } });
    expect(hits.ok ?? 0).toBe(before);
  });

  it('ends a chain with the built-in engine, so the agent still answers when every provider is down', async () => {
    const turn = await ask(await agentOn('wire/broken', ['wire/unavailable', 'local/extractive']));
    expect(turn.status).toBe(200);
    expect(turn.body.data.model).toBe('local/extractive');
  });

  it('says which models failed when none answers', async () => {
    const turn = await ask(await agentOn('wire/broken-alone', ['wire/unavailable-alone']));
    expect(turn.status).toBe(502);
    expect(turn.body.error.message).toBe('No model answered: wire/broken-alone (500), wire/unavailable-alone (503)');
    expect(turn.body.error.details.attempts).toEqual([
      { model: 'wire/broken-alone', error: { code: 'UPSTREAM_ERROR', message: 'Model provider wire answered 500', status: 500 } },
      { model: 'wire/unavailable-alone', error: { code: 'UPSTREAM_ERROR', message: 'Model provider wire answered 503', status: 503 } },
    ]);
  });

  it('streams from the fallback when the first model fails before its first word', async () => {
    const agentId = await agentOn('wire/unavailable', ['wire-claude/claude-test']);
    const res = await app().request(`/v1/agents/${agentId}/converse`, { method: 'POST', headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify({ message: 'Returns?' }) });
    const events = parseSse(await res.text());
    expect(events.filter((e) => e.event === 'delta').map((e) => (JSON.parse(e.data) as { text: string }).text).join('')).toBe('From Claude.');
    const done = JSON.parse(events.find((e) => e.event === 'done')!.data);
    expect(done, JSON.stringify(done)).toMatchObject({ model: 'wire-claude/claude-test', usage: { cachedInputTokens: 1960 } });
  });

  it('runs workflow generation steps down their chain, and counts each model of it', async () => {
    const wf = await api('POST', '/v1/workflows', { name: 'routed', steps: [{ type: 'generation', config: { model: 'wire/broken', fallbackModels: ['wire/ok'], prompt: 'Say hi to {{user_message}}' } }] });
    expect(wf.status, JSON.stringify(wf.body)).toBe(201);
    const ran = await api('POST', `/v1/workflows/${wf.body.data.id}/execute`, { input: 'Ana', mode: 'sync' });
    expect(ran.body.data.status).toBe('succeeded');
    expect(ran.body.data.output).toMatchObject({ text: 'From ok.', model: 'wire/ok' });
  });
});

describe('model names', () => {
  it('refuse a provider this deployment does not have, naming the field, in agents, fallback lists and steps', async () => {
    const agent = await api('POST', '/v1/agents', { name: 'x', model: 'nowhere/llama' });
    expect(agent.status).toBe(400);
    expect(agent.body.error.details).toMatchObject({ field: 'model', reason: expect.stringContaining('provider nowhere') });
    const fallback = await api('POST', '/v1/agents', { name: 'x', model: 'wire/ok', fallbackModels: ['local/extractive', 'elsewhere/m'] });
    expect(fallback.status).toBe(400);
    expect(fallback.body.error.details.field).toBe('fallbackModels[1]');
    const step = await api('POST', '/v1/workflows', { name: 'w', steps: [{ type: 'generation', config: { model: 'wire/ok', fallbackModels: ['gone/m'], prompt: 'hi' } }] });
    expect(step.status).toBe(400);
    expect(step.body.error.details.field).toMatch(/fallbackModels/);
  });
});

describe('circuit breakers', () => {
  it('open after repeated failures, skip the model for the cool-down, then let one request through and close when it answers', async () => {
    const agentId = await agentOn('wire/flaky', ['local/extractive']);
    flakyDown = true;
    for (let i = 0; i < 5; i++) expect((await complete(agentId)).model).toBe('local/extractive');
    expect(hits.flaky).toBe(5);
    expect(await circuits()).toContainEqual(expect.objectContaining({ model: 'wire/flaky', state: 'open' }));
    // Open: the next turns go straight to the fallback, without calling the failing model.
    expect((await complete(agentId)).model).toBe('local/extractive');
    expect(hits.flaky).toBe(5);
    // After the cool-down one request goes through; it fails, and the circuit opens again.
    offset.ms += 31_000;
    await complete(agentId);
    expect(hits.flaky).toBe(6);
    await complete(agentId);
    expect(hits.flaky).toBe(6);
    // Once the model is back, the request after the next cool-down closes the circuit.
    flakyDown = false;
    offset.ms += 31_000;
    expect((await complete(agentId)).model).toBe('wire/flaky');
    expect((await complete(agentId)).model).toBe('wire/flaky');
    expect(hits.flaky).toBe(8);
    expect((await circuits()).some((c) => c.model === 'wire/flaky')).toBe(false);
  });

  it('honour Retry-After: a throttled model is not called again before the time it gave', async () => {
    const agentId = await agentOn('wire/rate-limited-twice', ['wire/ok']);
    expect((await complete(agentId)).model).toBe('wire/ok');
    expect(hits['rate-limited-twice']).toBe(1);
    // One failure does not open a circuit, but the provider said when to come back.
    expect(await circuits()).toContainEqual(expect.objectContaining({ model: 'wire/rate-limited-twice', state: 'open' }));
    await complete(agentId);
    expect(hits['rate-limited-twice']).toBe(1);
    offset.ms += 21_000;
    await complete(agentId);
    expect(hits['rate-limited-twice']).toBe(2);
  });
});

describe('the admin listing', () => {
  it('shows the configured providers without their keys', async () => {
    const res = await call(app(), 'GET', '/platform/models', { headers: { authorization: `Bearer ${testPlatformSecrets.adminToken}` } });
    expect(res.status).toBe(200);
    const providers = res.body.data.providers as Array<Record<string, unknown>>;
    expect(providers.find((p) => p.name === 'wire-claude')).toMatchObject({ type: 'anthropic', usable: true, hasApiKey: true, models: ['wire-claude/claude-test'] });
    expect(providers.find((p) => p.name === 'openai')).toMatchObject({ usable: false });
    expect(JSON.stringify(res.body)).not.toContain('sk-ant-test');
    // Tenants' tokens do not open it.
    expect((await call(app(), 'GET', '/platform/models', { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
  });
});
