import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { localRuntime } from '../local/local-runtime';
import { fitToWindow, requestTokens, windowTokens } from '../shared/models/context-window';
import { openaiProvider } from '../shared/models/openai-provider';
import { modelResolver } from '../shared/models/resolve-model';
import type { ChatRequest } from '../shared/models/types';
import { createDb } from '../shared/store/db';
import { call } from './helpers/http';
import { testPlatformSecrets, testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/**
 * Long sessions never fail for length: an OpenAI-compatible stand-in at the wire checks that no
 * request passes 80% of the window its model was given, writes the summaries it is asked for (the
 * code words of the turns it summarizes, so a later turn shows what the summary carried), fails
 * for the model `big` so a chain falls back to a smaller window, and scripts tool rounds whose
 * results are larger than the window.
 */
interface Seen {
  model: string;
  tokens: number;
  summary: boolean;
  system: string;
  messages: Array<{ role: string; content: string | null }>;
}
const seen: Seen[] = [];
const WINDOWS: Record<string, number> = { small: 4096, tiny: 2048, big: 32_768 };
/** What the request holds, counted as Cairn counts (a conservative estimate), with its tool definitions. */
const wireTokens = (body: { messages: Array<{ content: string | null; tool_calls?: unknown }>; tools?: unknown[] }) =>
  body.messages.reduce((sum, m) => sum + windowTokens(m.content ?? '') + (m.tool_calls ? windowTokens(JSON.stringify(m.tool_calls)) : 0), 0) +
  (body.tools?.length ? windowTokens(JSON.stringify(body.tools)) : 0);

const provider = createServer((req, res) => {
  let raw = '';
  req.on('data', (c: Buffer) => (raw += c.toString()));
  req.on('end', () => {
    const body = JSON.parse(raw) as { model: string; messages: Array<{ role: string; content: string | null; tool_calls?: Array<{ id: string }> }>; tools?: unknown[] };
    const system = body.messages.find((m) => m.role === 'system')?.content ?? '';
    const summary = system.startsWith('You keep the running summary');
    seen.push({ model: body.model, tokens: wireTokens(body), summary, system, messages: body.messages });
    if (body.model === 'big') return res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"overloaded"}}');
    const asked = body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
    const rounds = Number(/rounds: (\d+)/.exec(asked)?.[1] ?? 0);
    // Rounds folded into the instructions leave the last call's id to say how far the run got.
    const lastCall = [...body.messages].reverse().find((m) => m.tool_calls)?.tool_calls?.[0]?.id;
    const done = lastCall ? Number(lastCall.slice(5)) + 1 : 0;
    const words = [...new Set([...asked.matchAll(/code word (\w+)/g)].map((m) => m[1]))];
    const message = summary
      ? { role: 'assistant', content: `The user gave the code words ${words.join(', ')}.` }
      : rounds > 0 && done < rounds && body.tools?.length
        ? { role: 'assistant', content: null, tool_calls: [{ id: `call_${done}`, type: 'function', function: { name: 'page', arguments: JSON.stringify({ n: done }) } }] }
        : { role: 'assistant', content: `Noted after ${done} rounds.` };
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({ id: 'c', object: 'chat.completion', created: 1764115200, model: body.model, choices: [{ index: 0, message, finish_reason: 'tool_calls' in message ? 'tool_calls' : 'stop' }], usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 } }),
    );
  });
});
/** A tool whose every answer is larger than the small window. */
const pages = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end(`${'The ledger line reads forty parcels received. '.repeat(400)}`));
});

let local: ReturnType<typeof localRuntime>;
let t: TestTenant;
const app = () => createLocalApp(local.rt);
const api = (method: string, path: string, body?: unknown) => call(app(), method, path, { key: t.apiKey, ...(body === undefined ? {} : { body }) });
const newAgent = async (body: Record<string, unknown>) => (await api('POST', '/v1/agents', { name: 'Long talker', ...body })).body.data.id as string;
const turn = async (agentId: string, message: string, sessionId?: string) => {
  const res = await api('POST', `/v1/agents/${agentId}/converse`, { message, ...(sessionId ? { context: { sessionId } } : {}) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as { reply: string; sessionId: string };
};
/** A turn's message of about 600 characters with a code word of its own. */
const chatter = (i: number) => `Turn ${i}: remember code word w${i}x. ${'We went over the delivery schedule for the northern depots again in detail. '.repeat(7).trimEnd()}`;

async function allMessages(agentId: string, sessionId: string) {
  const items: Array<{ id: string; content: string }> = [];
  let cursor: string | null = null;
  let meta: Record<string, unknown> = {};
  do {
    const page = await api('GET', `/v1/agents/${agentId}/sessions/${sessionId}/messages?limit=50${cursor ? `&cursor=${cursor}` : ''}`);
    items.push(...page.body.data);
    meta = page.body.meta;
    cursor = page.body.meta.pagination.nextCursor;
  } while (cursor);
  return { items, meta };
}

beforeAll(async () => {
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  const engine = openaiProvider({ baseUrl: `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1`, apiKey: 'sk-test' });
  local = localRuntime({
    db: createDb(),
    secretsKey: randomBytes(32),
    platformSecrets: testPlatformSecrets,
    queueNamespace: randomBytes(6).toString('hex'),
    models: {
      ...testRt.models,
      resolve: async (name) => {
        const model = name.slice(name.indexOf('/') + 1);
        return name.startsWith('openai/') ? { name, model, engine, contextWindow: WINDOWS[model]! } : testRt.models.resolve(name);
      },
    },
  });
  await local.start();
  t = await newTenant('unlimited');
});
afterAll(async () => {
  await local.stop();
  await new Promise<void>((resolve) => provider.close(() => resolve()));
  await new Promise<void>((resolve) => pages.close(() => resolve()));
});

describe('long sessions', () => {
  it('compacts a 60-turn session with the agent’s model: every request fits, the summary is stored and carried on, every message still listed', async () => {
    const agentId = await newAgent({ model: 'openai/small', instructions: 'Keep track of what the user says.' });
    seen.length = 0;
    const { sessionId } = await turn(agentId, chatter(0));
    for (let i = 1; i < 60; i++) await turn(agentId, chatter(i), sessionId);

    const budget = WINDOWS.small! * 0.8;
    expect(Math.max(...seen.map((s) => s.tokens))).toBeLessThanOrEqual(budget);
    const summaries = seen.filter((s) => s.summary);
    // Compacted now and then, not on every turn: the stored summary is reused in between.
    expect(summaries.length).toBeGreaterThanOrEqual(2);
    expect(summaries.length).toBeLessThanOrEqual(12);
    // The second summary was written from the first: the earliest code word travels on.
    expect(summaries[1]!.messages.at(-1)!.content).toContain('Earlier summary:');
    const last = seen.filter((s) => !s.summary).at(-1)!;
    expect(last.messages.some((m) => m.content?.includes('w0x'))).toBe(false);
    expect(last.system).toContain('Earlier in this conversation (summarized):');
    expect(last.system).toMatch(/code words .*w\d+x/);

    const { items, meta } = await allMessages(agentId, sessionId);
    expect(items).toHaveLength(120);
    expect(items[0]!.content).toBe(chatter(0));
    expect(items.map((m) => m.id)).toContain(meta.compactedThrough);
    expect(meta).toMatchObject({ summarizedBy: 'openai/small', summary: expect.stringContaining('The user gave the code words') });
    // Later turns were given the turns after the summary whole.
    const through = items.findIndex((m) => m.id === meta.compactedThrough);
    expect(last.messages.filter((m) => m.role === 'user').at(0)!.content).toBe(items[through + 1]!.content);

    // Deleting the session deletes its summary: the same id starts afresh.
    expect((await api('DELETE', `/v1/agents/${agentId}/sessions/${sessionId}`)).status).toBe(200);
    await turn(agentId, 'Hello again.', sessionId);
    expect((await allMessages(agentId, sessionId)).meta.compactedThrough).toBeUndefined();
  });

  it('fits each model of a fallback chain to its own window', async () => {
    const agentId = await newAgent({ model: 'openai/big', fallbackModels: ['openai/tiny'] });
    seen.length = 0;
    const long = `Please review this report. ${'The quarterly figures for the western region rose steadily through the year. '.repeat(250)}What stands out?`;
    const reply = await turn(agentId, long);
    expect(reply.reply).toContain('Noted');
    const [big, tiny] = [seen.find((s) => s.model === 'big')!, seen.find((s) => s.model === 'tiny')!];
    // The large window got the message whole; the small one its end, within 80% of 2,048 tokens.
    expect(big.messages.at(-1)!.content).toBe(long);
    expect(tiny.tokens).toBeLessThanOrEqual(WINDOWS.tiny! * 0.8);
    expect(tiny.messages.at(-1)!.content).toMatch(/What stands out\?$/);
  });

  it('keeps a run’s requests inside the window when tool results are larger than it', async () => {
    const agentId = await newAgent({
      model: 'openai/small',
      tools: [{ type: 'http', name: 'page', description: 'Reads a ledger page', method: 'POST', url: `http://localhost:${(pages.address() as AddressInfo).port}/page`, parameters: { type: 'object', properties: { n: { type: 'integer' } } } }],
    });
    seen.length = 0;
    const started = await api('POST', `/v1/agents/${agentId}/runs`, { message: 'rounds: 12', maxToolSteps: 20 });
    expect(started.status).toBe(202);
    await local.workflowSteps!.drain();
    const run = (await api('GET', `/v1/agents/${agentId}/runs/${started.body.data.id}`)).body.data;
    expect(run.status).toBe('completed');
    expect(run.steps.filter((s: { kind: string }) => s.kind === 'tool')).toHaveLength(12);
    // Each result is about 4,600 tokens; the window is 4,096: every request was fitted.
    expect(seen.length).toBe(13);
    expect(Math.max(...seen.map((s) => s.tokens))).toBeLessThanOrEqual(WINDOWS.small! * 0.8);
    // The step record keeps each call's result as the tool gave it, not as the window cut it.
    expect(run.steps.find((s: { kind: string }) => s.kind === 'tool').result.length).toBeGreaterThan(10_000);
  });

  it('compacts offline with the built-in engine’s extractive summary, and the engine still recalls what was said at the start', async () => {
    const agentId = await newAgent({ model: 'local/extractive' });
    const { sessionId } = await turn(agentId, 'My order number is 48213 and I live in Lyon.');
    for (let i = 1; i < 26; i++) await turn(agentId, `We talked about the weather in week ${i} and the ${i} trains that were late.`, sessionId);
    const { items, meta } = await allMessages(agentId, sessionId);
    expect(items).toHaveLength(52);
    expect(meta).toMatchObject({ summarizedBy: 'extractive', summary: expect.stringContaining('User: My order number is 48213') });
    const answer = await turn(agentId, 'What is my order number?', sessionId);
    expect(answer.reply).toContain('48213');
  });
});

describe('fitting a request to a window', () => {
  const base = (over: Partial<ChatRequest>): ChatRequest => ({ model: 'm', messages: [{ role: 'user', content: 'Hi' }], now: 0, temperature: 0, maxTokens: 1000, ...over });

  it('leaves a request that fits alone, and asks for no more reply than the window leaves', () => {
    const small = base({ instructions: 'Be brief.' });
    expect(fitToWindow(small, 8192)).toBe(small);
    const full = base({ messages: [{ role: 'user', content: 'x'.repeat(24_000) }], maxTokens: 4000 });
    const fitted = fitToWindow(full, 8192);
    expect(requestTokens(fitted)).toBeLessThanOrEqual(8192 * 0.8);
    expect(requestTokens(fitted) + fitted.maxTokens).toBeLessThanOrEqual(8192);
  });

  it('counts characters outside ASCII as a token each, so a CJK conversation fits too', () => {
    const messages = Array.from({ length: 20 }, (_, i) => ({ role: i % 2 ? ('assistant' as const) : ('user' as const), content: `第${i}回：配送センターの在庫を確認しました。`.repeat(30) }));
    const fitted = fitToWindow(base({ messages }), 4096);
    expect(requestTokens(fitted)).toBeLessThanOrEqual(4096 * 0.8);
    expect(fitted.summary).toContain('User: 第0回');
    expect(fitted.messages.at(-1)).toEqual(messages.at(-1));
  });

  it('folds old tool rounds into a line each, keeping the last two whole', () => {
    const toolRounds = Array.from({ length: 30 }, (_, i) => ({
      calls: [{ id: `c${i}`, name: 'lookup', arguments: { n: i } }],
      results: [{ id: `c${i}`, name: 'lookup', content: `Row ${i}: ${'value '.repeat(150)}`, isError: false }],
    }));
    const fitted = fitToWindow(base({ toolRounds, tools: [{ name: 'lookup', description: 'Looks up a row', parameters: { type: 'object' } }] }), 4096);
    expect(requestTokens(fitted)).toBeLessThanOrEqual(4096 * 0.8);
    expect(fitted.toolRounds!.map((r) => r.calls[0]!.id)).toEqual(['c28', 'c29']);
    expect(fitted.toolRounds!.at(-1)).toEqual(toolRounds.at(-1));
    expect(fitted.instructions).toMatch(/Tools called earlier in this turn \(summarized\):\n(.|\n)*- lookup\(\{"n":27\}\) → Row 27:/);
  });

  it('reads a provider’s contextWindow and per-model contextWindows', async () => {
    const resolver = modelResolver({ providers: { vllm: { type: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', contextWindow: 32_000, contextWindows: { 'qwen-small': 4096 } } } });
    expect((await resolver.resolve('vllm/qwen-small')).contextWindow).toBe(4096);
    expect((await resolver.resolve('vllm/llama-3.1-70b')).contextWindow).toBe(32_000);
  });
});
