import OpenAI from 'openai';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { localEngine } from '../shared/models/local-engine';
import { providerError } from '../shared/models/provider-error';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { parseSse } from './helpers/sse';
import { newTenant, type TestTenant } from './helpers/tenant';
import { testRt, testLocal } from './helpers/runtime';

const app = createLocalApp(testRt);
const files = [
  { path: 'policies/returns.md', content: '# Returns\n\nItems can be returned within 30 days of delivery. Refunds reach your card within 5 business days.' },
  { path: 'shipping.md', content: '# Shipping\n\nStandard shipping takes 3 to 5 days. Express shipping arrives the next day.' },
];

describe('converse with the built-in engine', () => {
  let t: TestTenant;
  let grounded: string;
  let plain: string;
  let ksId: string;
  beforeAll(async () => {
    t = await newTenant();
    ksId = (await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'Help', type: 'file-collection', files } })).body.data.id;
    await call(app, 'POST', `/v1/knowledge-sources/${ksId}/connect`, { key: t.apiKey, body: {} });
    await testLocal.ingestion!.drain();
    grounded = (await call(app, 'POST', '/v1/agents', {
      key: t.apiKey,
      body: { name: 'Support bot', description: 'Answers questions about orders', model: 'gpt-4', capabilities: ['chat', 'document-search'], knowledgeSourceIds: [ksId] },
    })).body.data.id;
    plain = (await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Greeter', model: 'gpt-4' } })).body.data.id;
  });

  const converse = (agentId: string, body: unknown, headers?: Record<string, string>) =>
    call(app, 'POST', `/v1/agents/${agentId}/converse`, { key: t.apiKey, body, headers });

  it('answers from the passages, citing them, with sources and usage', async () => {
    const res = await converse(grounded, { message: 'How long do I have to return an item?', context: { userId: 'u1' } });
    expect(res.status).toBe(200);
    const data = res.body.data;
    expect(data.reply).toContain('Items can be returned within 30 days of delivery.');
    expect(data.reply).toMatch(/\[1\]/);
    expect(data.sources[0]).toMatchObject({ knowledgeSourceId: ksId, path: 'policies/returns.md' });
    expect(data.sources[0].chunkId).toMatch(/^chk_/);
    expect(data.sources[0].snippet).toContain('returned within 30 days');
    expect(data).toMatchObject({ agentId: grounded, model: 'local/extractive', finishReason: 'stop' });
    expect(data.sessionId).toMatch(/^ses_/);
    expect(data.usage.inputTokens).toBeGreaterThan(0);
    expect(data.usage.outputTokens).toBeGreaterThan(0);
  });

  it('lists as sources only the passages the reply cites, numbered as it cites them', async () => {
    const data = (await converse(grounded, { message: 'When does express shipping arrive?' })).body.data;
    expect(data.reply).toContain('Express shipping arrives the next day. [1]');
    // Both files were searched; the reply uses one.
    expect(data.sources.map((s: { path: string }) => s.path)).toEqual(['shipping.md']);
    const missed = (await converse(grounded, { message: 'Who won the football world cup?' })).body.data;
    expect(missed.sources).toEqual([]);
  });

  it('says it found nothing rather than inventing', async () => {
    const res = await converse(grounded, { message: 'Who won the football world cup?' });
    // The miss names what was searched, so it can be told from a gap in the knowledge.
    expect(res.body.data.reply).toMatch(/^I couldn't find anything about that in the connected knowledge: (no passage matched the question|the \d+ closest passages \(the first from “.+”\) do not answer it)\.$/);
  });

  it('gives short honest replies without knowledge', async () => {
    expect((await converse(plain, { message: 'Hello there' })).body.data.reply).toMatch(/^Hello! I'm Greeter\./);
    const unknown = (await converse(plain, { message: 'What is the capital of Australia?' })).body.data.reply;
    expect(unknown).toMatch(/can't answer/);
    expect(unknown).not.toMatch(/Canberra/);
  });

  it('says what to change when the agent lists sources it may not search', async () => {
    const listing = (await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Lister', model: 'gpt-4', capabilities: ['chat'], knowledgeSourceIds: [ksId] } })).body.data.id;
    const reply = (await converse(listing, { message: 'How long do I have to return an item?' })).body.data.reply;
    expect(reply).toContain('lists 1 knowledge source');
    expect(reply).toContain('Add "document-search" to its capabilities');
  });

  it('uses a fact from turn 1 in turn 3 of the same session, and not in another session', async () => {
    const first = await converse(plain, { message: 'My order number is 48213 and I live in Lyon.' });
    const sessionId = first.body.data.sessionId;
    await converse(plain, { message: 'I like blue bicycles.', context: { sessionId } });
    const third = await converse(plain, { message: 'What is my order number?', context: { sessionId } });
    expect(third.body.data.reply).toContain('48213');
    const other = await converse(plain, { message: 'What is my order number?', context: { sessionId: 'another-session' } });
    expect(other.body.data.reply).not.toContain('48213');

    const page = await call(app, 'GET', `/v1/agents/${plain}/sessions/${sessionId}/messages?limit=4`, { key: t.apiKey });
    expect(page.body.data.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(page.body.data[0].content).toBe('My order number is 48213 and I live in Lyon.');
    expect(page.body.meta.pagination.hasMore).toBe(true);
    const rest = await call(app, 'GET', `/v1/agents/${plain}/sessions/${sessionId}/messages?limit=4&cursor=${page.body.meta.pagination.nextCursor}`, { key: t.apiKey });
    expect(rest.body.data).toHaveLength(2);
    expect(rest.body.data[1].content).toContain('48213');

    const del = await call(app, 'DELETE', `/v1/agents/${plain}/sessions/${sessionId}`, { key: t.apiKey });
    expect(del.body.data).toEqual({ id: sessionId, deleted: true });
    expect((await call(app, 'GET', `/v1/agents/${plain}/sessions/${sessionId}/messages`, { key: t.apiKey })).body.data).toEqual([]);
    expect((await call(app, 'DELETE', `/v1/agents/${plain}/sessions/${sessionId}`, { key: t.apiKey })).status).toBe(404);
    const after = await converse(plain, { message: 'What is my order number?', context: { sessionId } });
    expect(after.body.data.reply).not.toContain('48213');
  });

  it('lists an agent’s sessions newest first, paginated, without another agent’s', async () => {
    const agent = (await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Lister of sessions', model: 'gpt-4' } })).body.data.id;
    const other = (await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Other', model: 'gpt-4' } })).body.data.id;
    const first = (await converse(agent, { message: 'Hello there', context: { userId: 'ana' } })).body.data.sessionId;
    await converse(agent, { message: 'Still there?', context: { sessionId: first } });
    const second = (await converse(agent, { message: 'Hello again' })).body.data.sessionId;
    await converse(other, { message: 'Hello' });

    const page = await call(app, 'GET', `/v1/agents/${agent}/sessions?limit=1`, { key: t.apiKey });
    expect(page.status).toBe(200);
    expect(page.body.data).toEqual([{ sessionId: second, createdAt: expect.any(String), lastMessageAt: expect.any(String), messages: 2 }]);
    expect(page.body.meta.pagination.hasMore).toBe(true);
    const rest = await call(app, 'GET', `/v1/agents/${agent}/sessions?limit=5&cursor=${page.body.meta.pagination.nextCursor}`, { key: t.apiKey });
    expect(rest.body.data).toEqual([expect.objectContaining({ sessionId: first, userId: 'ana', messages: 4 })]);
    expect(rest.body.meta.pagination.hasMore).toBe(false);
    expect((await call(app, 'GET', '/v1/agents/agt_missing/sessions', { key: t.apiKey })).status).toBe(404);
  });

  it('skips a source that is not ready and says so in meta', async () => {
    const fresh = (await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'new', type: 'file-collection', files } })).body.data.id;
    const agent = (await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'a', model: 'gpt-4', capabilities: ['document-search'], knowledgeSourceIds: [fresh, ksId] } })).body.data.id;
    const res = await converse(agent, { message: 'express shipping' });
    expect(res.status).toBe(200);
    expect(res.body.meta.skippedKnowledgeSources).toEqual([{ knowledgeSourceId: fresh, status: 'created' }]);
    expect(res.body.data.reply).toContain('Express shipping arrives the next day.');
  });

  it('validates the message and answers 404 for unknown agents', async () => {
    expect((await converse(grounded, { message: '' })).body.error.details.field).toBe('message');
    expect((await converse(grounded, { message: 'x'.repeat(32_001) })).status).toBe(400);
    expect((await converse('agt_01m7y62dvspbq7k3p58zfb7w0n', { message: 'hi' })).status).toBe(404);
  });

  it('streams server-sent events: start, sources, deltas, done', async () => {
    for (const [body, headers] of [
      [{ message: 'How long do I have to return an item?', stream: true }, undefined],
      [{ message: 'How long do I have to return an item?' }, { accept: 'text/event-stream' }],
    ] as const) {
      const res = await app.request('http://localhost/v1/agents/' + grounded + '/converse', {
        method: 'POST',
        headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      const events = parseSse(await res.text());
      expect(events[0]!.event).toBe('start');
      expect(events[1]!.event).toBe('sources');
      const deltas = events.filter((e) => e.event === 'delta').map((e) => JSON.parse(e.data).text as string);
      expect(deltas.length).toBeGreaterThan(3);
      const done = JSON.parse(events[events.length - 1]!.data);
      expect(events[events.length - 1]!.event).toBe('done');
      expect(deltas.join('')).toBe(done.reply);
      expect(done.reply).toContain('returned within 30 days');
      expect(done.usage.outputTokens).toBeGreaterThan(0);
    }
  });

  it('answers 502 naming the provider when the model fails, and an error event when streaming', async () => {
    const generate = vi.spyOn(localEngine, 'generate').mockRejectedValue(providerError('openai', 503, 'upstream overloaded'));
     
    const stream = vi.spyOn(localEngine, 'stream').mockImplementation(async function* () {
      throw providerError('openai', 'timeout');
    });
    try {
      const res = await converse(grounded, { message: 'returns?' });
      expect(res.status).toBe(502);
      expect(res.body.error).toMatchObject({ code: 'UPSTREAM_ERROR', details: { provider: 'openai', status: 503 } });
      const streamed = await app.request(`http://localhost/v1/agents/${grounded}/converse`, {
        method: 'POST',
        headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'returns?', stream: true }),
      });
      const events = parseSse(await streamed.text());
      const last = events[events.length - 1]!;
      expect(last.event).toBe('error');
      expect(JSON.parse(last.data)).toMatchObject({ code: 'UPSTREAM_ERROR', details: { provider: 'openai', status: 'timeout' } });
    } finally {
      generate.mockRestore();
      stream.mockRestore();
    }
  });

  it('serves the official openai client at /v1/chat/completions with a Cairn key as Bearer', async () => {
    const client = new OpenAI({
      apiKey: t.apiKey,
      baseURL: 'http://cairn.test/v1',
      fetch: async (url: string | URL | Request, init?: RequestInit) => app.request(url instanceof Request ? url : url.toString(), init),
    });
    const completion = await client.chat.completions.create({
      model: grounded,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'How long do I have to return an item?' },
      ],
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]!.message.content).toContain('returned within 30 days');
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect(completion.usage!.total_tokens).toBeGreaterThan(0);

    const stream = await client.chat.completions.create({
      model: grounded,
      stream: true,
      messages: [
        { role: 'user', content: 'My order number is 777.' },
        { role: 'assistant', content: 'Noted.' },
        { role: 'user', content: 'What is my order number?' },
      ],
    });
    let text = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toContain('777');
    expect(finish).toBe('stop');

    await expect(client.chat.completions.create({ model: 'agt_01m7y62dvspbq7k3p58zfb7w0n', messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ status: 404 });
    const wrongKey = new OpenAI({ apiKey: 'cak_wrong_key_000000000000', baseURL: 'http://cairn.test/v1', fetch: async (u: string | URL | Request, i?: RequestInit) => app.request(u instanceof Request ? u : u.toString(), i) });
    await expect(wrongKey.chat.completions.create({ model: grounded, messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ status: 401 });
  });
});

describe('model resolution', () => {
  it('resolves bare names and unconfigured providers to the built-in engine', async () => {
    expect((await testRt.models.resolve('gpt-4')).name).toBe('local/extractive');
    expect((await testRt.models.resolve('openai/gpt-4o')).name).toBe('local/extractive'); // no OPENAI_API_KEY here
    expect((await testRt.models.resolve('local/anything')).engine.provider).toBe('local');
  });
});
