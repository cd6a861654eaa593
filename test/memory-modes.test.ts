import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { consumeMemoryMessage } from '../shared/agents';
import type { MemoryMessage, StepsQueueMessage } from '../shared/queue/messages';
import { call } from './helpers/http';
import { localRuntimeWith, modelsWithStandIn } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/**
 * Memory as a choice, at the wire: an OpenAI-compatible stand-in answers turns and, told apart by
 * its instructions, memory extractions — which it can hold open. With `rules` (the default) a
 * provider-backed turn makes one model call; with `model` the reply is back before the extraction
 * is even asked for, the fact lands in the memory graph after, counted under the operation
 * `memory`; a redelivered extraction records the fact once; `off` remembers nothing.
 */
const calls: Array<{ kind: 'turn' | 'memory'; at: number }> = [];
let holdExtraction: Promise<void> | undefined;
const provider = createServer((req, res) => {
  let raw = '';
  req.on('data', (c: Buffer) => (raw += c.toString()));
  req.on('end', () => void answer());
  const answer = async () => {
    const body = JSON.parse(raw) as { messages: Array<{ role: string; content: string }> };
    const memory = body.messages.some((m) => m.role === 'system' && m.content.startsWith('You extract long-term memory'));
    calls.push({ kind: memory ? 'memory' : 'turn', at: Date.now() });
    if (memory) await holdExtraction;
    const content = memory ? '{"entities":[{"label":"express shipping","type":"concept"}],"facts":[{"relation":"prefers","object":{"label":"express shipping","type":"concept"},"negated":false}]}' : 'Noted, thank you.';
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1764115200, model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: memory ? 200 : 40, completion_tokens: memory ? 30 : 5, total_tokens: memory ? 230 : 45 } }),
    );
  };
});

let local: ReturnType<typeof localRuntimeWith>;
let t: TestTenant;
const api = (method: string, path: string, body?: unknown) => call(createLocalApp(local.rt), method, path, { key: t.apiKey, ...(body === undefined ? {} : { body }) });
const agentWith = async (memory?: unknown) => (await api('POST', '/v1/agents', { name: 'Shop', model: 'openai/gpt-4o', ...(memory ? { memory } : {}) })).body.data as { id: string; memory: unknown };
const facts = async (agentId: string, userId: string) =>
  (await local.rt.store.memoryGraph.memoryOf(t.scope, `u:${userId}`)).filter((i) => i.kind === 'edge' && i.agentId === agentId).map((e) => (e as { fact: string }).fact);

beforeAll(async () => {
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  local = localRuntimeWith(modelsWithStandIn(provider));
  await local.start();
  t = await newTenant();
});
afterAll(async () => {
  await local.stop();
  await new Promise<void>((resolve) => provider.close(() => resolve()));
});

describe('memory as a choice', () => {
  it('remembers by the rules by default, whatever the model: one model call a turn', async () => {
    const agent = await agentWith();
    expect(agent.memory).toEqual({ mode: 'rules' });
    calls.length = 0;
    const turn = await api('POST', `/v1/agents/${agent.id}/converse`, { message: 'I live in Lisbon.', context: { userId: 'ana' } });
    expect(turn.status).toBe(200);
    await local.workflowSteps!.drain();
    expect(calls.map((c) => c.kind)).toEqual(['turn']);
    expect(await facts(agent.id, 'ana')).toContain('user lives in Lisbon');
  });

  it('with mode model answers before the extraction is made, which then records the fact as usage of the operation memory', async () => {
    const agent = await agentWith({ mode: 'model' });
    calls.length = 0;
    let release!: () => void;
    holdExtraction = new Promise((resolve) => (release = resolve));
    const answered = await api('POST', `/v1/agents/${agent.id}/converse`, { message: 'I always choose express shipping.', context: { userId: 'ben' } });
    expect(answered.status).toBe(200);
    expect(answered.body.data.reply).toBe('Noted, thank you.');
    // The turn answered while the extraction is held (or not asked for yet): the fact is not there.
    expect(calls.filter((c) => c.kind === 'turn')).toHaveLength(1);
    expect(await facts(agent.id, 'ben')).toEqual([]);
    await expect.poll(() => calls.some((c) => c.kind === 'memory'), { timeout: 10_000 }).toBe(true);
    release();
    await local.workflowSteps!.drain();
    holdExtraction = undefined;
    expect(await facts(agent.id, 'ben')).toEqual(['user prefers express shipping']);
    const usage = (await api('GET', '/v1/usage?groupBy=operation')).body.data as { rows: Array<{ group: string; inputTokens: number; outputTokens: number; requests: number }> };
    expect(usage.rows.find((r) => r.group === 'memory')).toMatchObject({ inputTokens: 200, outputTokens: 30, requests: 1 });
    // The extraction is in the turn's trace: its span, and the model call under it.
    const trace = (await api('GET', `/v1/traces/${answered.headers.get('x-request-id')}`)).body.data as { spans: Array<{ name: string; spanId: string; parentSpanId?: string }> };
    const extraction = trace.spans.find((s) => s.name === 'agent.memory');
    expect(extraction).toBeDefined();
    expect(trace.spans.some((s) => s.parentSpanId === extraction!.spanId)).toBe(true);
    // The next turn recalls it (a real provider gets it in its system prompt).
    await api('POST', `/v1/agents/${agent.id}/converse`, { message: 'What do I prefer?', context: { userId: 'ben' } });
    await local.workflowSteps!.drain();
    expect(calls.filter((c) => c.kind === 'turn')).toHaveLength(2);
  });

  it('records a redelivered extraction once', async () => {
    const agent = await agentWith({ mode: 'model', model: 'openai/gpt-4o-mini' });
    const message: MemoryMessage = { type: 'memory', tenantId: t.scope.tenantId, agentId: agent.id, sessionId: 'ses_01m8redelivered00000000000', userId: 'cy', messageId: 'msg_01m8redelivered00000000000', text: 'I always choose express shipping.', reply: 'Noted.', at: Date.now(), model: 'openai/gpt-4o-mini', release: 'draft' };
    const delivery = { receiveCount: 1, maxReceives: 5 };
    await consumeMemoryMessage(local.rt, message, delivery);
    const before = calls.length;
    await consumeMemoryMessage(local.rt, message, { ...delivery, receiveCount: 2 });
    expect(calls.length).toBe(before); // the episode was found: no second extraction
    expect(await facts(agent.id, 'cy')).toEqual(['user prefers express shipping']);
    const episodes = (await local.rt.store.memoryGraph.memoryOf(t.scope, 'u:cy')).filter((i) => i.kind === 'episode');
    expect(episodes).toHaveLength(1);
  });

  it('with mode off remembers nothing and recalls nothing', async () => {
    const agent = await agentWith({ mode: 'off' });
    calls.length = 0;
    await api('POST', `/v1/agents/${agent.id}/converse`, { message: 'I live in Porto.', context: { userId: 'dee' } });
    await local.workflowSteps!.drain();
    expect(calls.map((c) => c.kind)).toEqual(['turn']);
    expect(await local.rt.store.memoryGraph.memoryOf(t.scope, 'u:dee')).toEqual([]);
    const refused = await api('POST', '/v1/agents', { name: 'x', model: 'gpt-4', memory: { mode: 'rules', model: 'openai/gpt-4o' } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.field).toBe('memory.model');
  });
});

// The message type the steps queue carries (a compile-time check that memory work is one of them).
const _carried: StepsQueueMessage['type'] = 'memory';
void _carried;
