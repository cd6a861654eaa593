import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import type { Runtime } from '../shared/runtime';
import { chatStandIn } from './helpers/chat-stand-in';
import { call } from './helpers/http';
import { newTenant, type TestTenant } from './helpers/tenant';
import { localRuntimeWith, modelsWithStandIn } from './helpers/runtime';

/**
 * Handoffs: an agent hands the conversation to another, which answers the same turn and holds the
 * session until it hands back. An OpenAI-compatible stand-in at the wire plays each agent by its
 * instructions ("You are <name>"): given a transfer_to_<x> tool and a message naming <x>, it
 * transfers; otherwise it answers as itself, saying how many earlier messages it was given.
 */
const provider = chatStandIn((body) => {
  const name = /You are (\w+)/.exec(body.messages.find((m) => m.role === 'system')?.content ?? '')?.[1] ?? 'nobody';
  const asked = body.messages.filter((m) => m.role === 'user');
  const question = (asked.at(-1)?.content ?? '').toLowerCase();
  const transfer = body.tools?.map((t) => t.function.name).find((tool) => tool.startsWith('transfer_to_') && question.includes(tool.slice('transfer_to_'.length)));
  return transfer ? { call: { id: `call_${name}`, name: transfer } } : { text: `${name} here (${asked.length - 1} earlier questions).` };
});

let rt: Runtime;
let t: TestTenant;
// A runtime of its own: its queue's workers (background runs) call the stand-in too.
let local: ReturnType<typeof localRuntimeWith>;
const api = (method: string, path: string, body?: unknown) => call(createLocalApp(rt), method, path, { key: t.apiKey, body });
const agentNamed = async (name: string, extra: Record<string, unknown> = {}) => {
  const created = await api('POST', '/v1/agents', { name, model: 'openai/gpt-4o', instructions: `You are ${name}.`, ...extra });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.data.id as string;
};

beforeAll(async () => {
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  local = localRuntimeWith(modelsWithStandIn(provider));
  await local.start();
  rt = local.rt;
  t = await newTenant();
});
afterAll(async () => {
  await local.stop();
  await new Promise<void>((resolve) => provider.close(() => resolve()));
});

describe('handoffs', () => {
  it('moves the conversation: the target answers this turn with the history, and the session’s next turns until it hands back', async () => {
    const billing = await agentNamed('Billing');
    const front = await agentNamed('Front', { handoffs: [billing] });
    await api('PUT', `/v1/agents/${billing}`, { name: 'Billing', model: 'openai/gpt-4o', instructions: 'You are Billing.', handoffs: [front] });

    const first = await api('POST', `/v1/agents/${front}/converse`, { message: 'Hello there' });
    expect(first.body.data).toMatchObject({ agentId: front, reply: 'Front here (0 earlier questions).' });
    const sessionId = first.body.data.sessionId as string;

    const handed = await api('POST', `/v1/agents/${front}/converse`, { message: 'Put me through to billing please', context: { sessionId } });
    expect(handed.status, JSON.stringify(handed.body)).toBe(200);
    // Billing answered the same turn, with the session's history.
    expect(handed.body.data).toMatchObject({ agentId: billing, sessionId, reply: 'Billing here (1 earlier questions).', handoffs: [{ from: front, to: billing }] });
    expect(handed.body.data.usage).toEqual({ inputTokens: 20, outputTokens: 10 });

    // The session stays with Billing, until it hands back.
    const stays = await api('POST', `/v1/agents/${front}/converse`, { message: 'When does my refund arrive?', context: { sessionId } });
    expect(stays.body.data).toMatchObject({ agentId: billing, reply: 'Billing here (2 earlier questions).' });
    expect(stays.body.data.handoffs).toBeUndefined();
    const back = await api('POST', `/v1/agents/${front}/converse`, { message: 'Thanks, back to the front desk', context: { sessionId } });
    expect(back.body.data).toMatchObject({ agentId: front, reply: 'Front here (3 earlier questions).', handoffs: [{ from: billing, to: front }] });
    expect((await api('POST', `/v1/agents/${front}/converse`, { message: 'Bye', context: { sessionId } })).body.data.agentId).toBe(front);

    // The messages API records who answered and each handoff; the session is the first agent's.
    const messages = (await api('GET', `/v1/agents/${front}/sessions/${sessionId}/messages`)).body.data as Array<{ role: string; agentId?: string; handoffs?: unknown }>;
    expect(messages.filter((m) => m.role === 'assistant').map((m) => [m.agentId ?? null, m.handoffs ?? null])).toEqual([
      [null, null],
      [billing, [{ from: front, to: billing }]],
      [billing, null],
      [null, [{ from: billing, to: front }]],
      [null, null],
    ]);
    expect((await api('GET', `/v1/agents/${billing}/sessions`)).body.data).toEqual([]);

    // Each agent's model calls are its own usage.
    const byAgent = (await api('GET', '/v1/usage?groupBy=agent')).body.data.rows as Array<{ group: string; inputTokens: number }>;
    expect(byAgent.find((r) => r.group === front)?.inputTokens).toBe(40);
    expect(byAgent.find((r) => r.group === billing)?.inputTokens).toBe(30);

    // A session held by an agent deleted since goes back to its own.
    const temp = await agentNamed('Temp');
    await api('PUT', `/v1/agents/${front}`, { name: 'Front', model: 'openai/gpt-4o', instructions: 'You are Front.', handoffs: [billing, temp] });
    expect((await api('POST', `/v1/agents/${front}/converse`, { message: 'temp, please', context: { sessionId } })).body.data.agentId).toBe(temp);
    await api('DELETE', `/v1/agents/${temp}`);
    expect((await api('POST', `/v1/agents/${front}/converse`, { message: 'Still there?', context: { sessionId } })).body.data.agentId).toBe(front);

    // The OpenAI-compatible routes say which agent answered too.
    const completion = await api('POST', '/v1/chat/completions', { model: front, messages: [{ role: 'user', content: 'billing, please' }] });
    expect(completion.body.cairn.agentId).toBe(billing);
  });

  it('hands over in a background run too', async () => {
    const billing = await agentNamed('Billing');
    const front = await agentNamed('Front', { handoffs: [billing] });
    const run = await api('POST', `/v1/agents/${front}/runs`, { message: 'billing: where is my refund?' });
    expect(run.status, JSON.stringify(run.body)).toBe(202);
    await local.workflowSteps!.drain();
    const done = (await api('GET', `/v1/agents/${front}/runs/${run.body.data.id}`)).body.data;
    expect(done).toMatchObject({ status: 'completed', reply: 'Billing here (0 earlier questions).' });
    const stored = (await api('GET', `/v1/agents/${front}/sessions/${done.sessionId}/messages`)).body.data;
    expect(stored[1]).toMatchObject({ agentId: billing, handoffs: [{ from: front, to: billing }] });
  });

  it('with the built-in engine, hands over when the message is about the target’s description', async () => {
    const refunds = (await api('POST', '/v1/agents', { name: 'Refunds desk', description: 'Handles refunds and returned parcels', model: 'local/extractive' })).body.data.id;
    const desk = (await api('POST', '/v1/agents', { name: 'Reception', model: 'local/extractive', handoffs: [refunds] })).body.data.id;
    const handed = await api('POST', `/v1/agents/${desk}/converse`, { message: 'I want a refund for a returned parcel' });
    expect(handed.body.data).toMatchObject({ agentId: refunds, handoffs: [{ from: desk, to: refunds }] });
    const stays = await api('POST', `/v1/agents/${desk}/converse`, { message: 'Hello?' });
    expect(stays.body.data.agentId).toBe(desk);
  });

  it('refuses on write a handoff to an agent that does not exist, or to itself', async () => {
    const missing = await api('POST', '/v1/agents', { name: 'Lost', model: 'openai/gpt-4o', handoffs: ['agt_01jd8x2k3m4n5p6q7r8s9t0v1w'] });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.field).toBe('handoffs[0]');
    const me = await agentNamed('Me');
    const self = await api('PUT', `/v1/agents/${me}`, { name: 'Me', model: 'openai/gpt-4o', handoffs: [me] });
    expect(self.body.error.details.field).toBe('handoffs[0]');
  });
});
