import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { extractMemory } from '../shared/memory/extract';
import { extractWithModel } from '../shared/memory/llm-extract';
import { openaiProvider } from '../shared/models/openai-provider';
import { systemPrompt } from '../shared/models/types';
import { call } from './helpers/http';
import { pcall, platformTestSecrets, provision, type ProvisionedTenant } from './helpers/platform';
import { testRt } from './helpers/runtime';

const app = createLocalApp(testRt);
const secrets = platformTestSecrets();

describe('memory extraction (rule-based)', () => {
  it('finds facts about the user and typed entities', () => {
    const { facts, entities } = extractMemory("Hi, I'm Dana. I prefer express shipping for my orders. I bought an iPhone 15 on March 3, 2026 for $999.");
    expect(facts.map((f) => [f.relation, f.object.label, f.negated])).toEqual([
      ['name', 'Dana', false],
      ['prefers', 'express shipping', false],
      ['ordered', 'iPhone 15', false],
    ]);
    expect(entities).toEqual(expect.arrayContaining([
      { label: 'Dana', type: 'person' },
      { label: 'iPhone 15', type: 'product' },
      { label: 'March 3, 2026', type: 'date' },
      { label: '$999', type: 'number' },
    ]));
    const places = extractMemory('We are meeting John Smith in Berlin next week. I work at Acme Corp.');
    expect(places.entities).toEqual(expect.arrayContaining([
      { label: 'Berlin', type: 'place' },
      { label: 'next week', type: 'date' },
      { label: 'Acme Corp', type: 'organization' },
    ]));
    expect(extractMemory("I don't like spicy food anymore.").facts).toEqual([{ subject: 'user', relation: 'likes', object: { label: 'spicy food', type: 'concept' }, negated: true }]);
    expect(extractMemory("I'd like to know how returns work.").facts).toEqual([]);
  });
});

describe('memory extraction by a configured model', () => {
  let server: Server;
  let reply = '';
  const requests: Array<Record<string, unknown>> = [];
  let resolved: Parameters<typeof extractWithModel>[0];

  beforeAll(async () => {
    // An OpenAI-compatible endpoint answering with the recorded shape of a chat completion.
    server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        requests.push(JSON.parse(raw) as Record<string, unknown>);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({
          id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG', object: 'chat.completion', created: 1741570283, model: 'gpt-4o-2024-08-06',
          choices: [{ index: 0, message: { role: 'assistant', content: reply, refusal: null, annotations: [] }, logprobs: null, finish_reason: 'stop' }],
          usage: { prompt_tokens: 180, completion_tokens: 60, total_tokens: 240 }, service_tier: 'default', system_fingerprint: 'fp_fc9f1d7035',
        }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
    resolved = { name: 'openai/gpt-4o', model: 'gpt-4o', engine: openaiProvider({ baseUrl: base, apiKey: 'sk-test' }) };
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('reads entities and facts from the model’s JSON, even inside a code fence', async () => {
    reply = 'Here you go:\n```json\n{"entities":[{"label":"Lisbon","type":"place"}],"facts":[{"relation":"moved_to","object":{"label":"Lisbon","type":"place"}},{"relation":"likes","object":{"label":"surfing","type":"hobby"},"negated":true}]}\n```';
    const out = await extractWithModel(resolved, 'We moved to Lisbon; I gave up surfing.', AbortSignal.timeout(5000), Date.now());
    expect(out.facts).toEqual([
      { subject: 'user', relation: 'moved_to', object: { label: 'Lisbon', type: 'place' }, negated: false },
      { subject: 'user', relation: 'likes', object: { label: 'surfing', type: 'concept' }, negated: true },
    ]);
    expect(requests.at(-1)).toMatchObject({ model: 'gpt-4o', temperature: 0 });
  });

  it('gives a real provider the remembered facts in its system prompt', () => {
    const prompt = systemPrompt({ model: 'm', now: Date.now(), messages: [{ role: 'user', content: 'hi' }], memory: ['user prefers express shipping', "user's name is Dana"], temperature: 0, maxTokens: 10 });
    expect(prompt).toBe("What you remember about the user from earlier conversations (use it when relevant):\n- user prefers express shipping\n- user's name is Dana");
  });

  it('refuses an answer that is not the asked-for JSON, so the rules are used instead', async () => {
    reply = 'Sure! The user likes Lisbon.';
    await expect(extractWithModel(resolved, 'I like Lisbon.', AbortSignal.timeout(5000), Date.now())).rejects.toThrow(/JSON/);
    reply = '{"facts":[{"relation":"DROP TABLE","object":{"label":"x","type":"concept"}}]}';
    await expect(extractWithModel(resolved, 'I like Lisbon.', AbortSignal.timeout(5000), Date.now())).rejects.toThrow();
  });
});

describe('memory graph from converse turns', () => {
  let a: ProvisionedTenant;
  let b: ProvisionedTenant;
  let agentId: string;
  const say = (message: string, context: Record<string, string>) =>
    call(app, 'POST', `/v1/agents/${agentId}/converse`, { key: a.apiKey, body: { message, context } });
  const query = (t: ProvisionedTenant, body: Record<string, unknown>) => pcall(app, 'POST', '/platform/memory/query', t.accessToken, { body: { agentId, ...body } });

  beforeAll(async () => {
    a = await provision(app, secrets.adminToken);
    b = await provision(app, secrets.adminToken);
    agentId = (await call(app, 'POST', '/v1/agents', { key: a.apiKey, body: { name: 'Shop assistant', model: 'local/extractive' } })).body.data.id;
    expect((await say('Hi, my name is Dana and I live in Portland. I prefer express shipping.', { sessionId: 'dana-1', userId: 'dana' })).status).toBe(200);
    // A statement is acknowledged, not answered with "nothing found".
    expect((await say('I like green tea.', { sessionId: 'dana-1', userId: 'dana' })).body.data.reply).toBe("Noted — I'll keep that in mind.");
    await say('I prefer standard shipping.', { sessionId: 'omar-1', userId: 'omar' });
  });

  it('finds a fact stated in one session from another session of the same user, not for another user', async () => {
    const res = await query(a, { userId: 'dana', sessionId: 'dana-2', query: 'which shipping does she prefer?' });
    expect(res.status).toBe(200);
    const facts = res.body.data.edges.map((e: { fact: string }) => e.fact);
    expect(facts).toEqual(['user prefers express shipping']);
    // Two hops out (shipping → user → the rest) the user's other facts follow, ranked below.
    const wider = await query(a, { userId: 'dana', sessionId: 'dana-2', query: 'which shipping does she prefer?', depth: 2 });
    const widerFacts = wider.body.data.edges.map((e: { fact: string }) => e.fact);
    expect(widerFacts[0]).toBe('user prefers express shipping');
    expect(widerFacts).toEqual(expect.arrayContaining(["user's name is Dana", 'user lives in Portland', 'user likes green tea']));
    expect(res.body.data.nodes[0]).toMatchObject({ label: 'express shipping', type: 'concept' });
    expect(res.body.data.episodes[0]).toMatchObject({ sessionId: 'dana-1', text: expect.stringContaining('express shipping') });

    // The agent itself remembers, in a new session, and only for the same user.
    const asked = await say('Which shipping do I prefer?', { sessionId: 'dana-2', userId: 'dana' });
    expect(asked.body.data.reply).toBe('I remember from an earlier conversation that you prefer express shipping.');
    const askedOmar = await say('Which shipping do I prefer?', { sessionId: 'omar-2', userId: 'omar' });
    expect(askedOmar.body.data.reply).toBe('I remember from an earlier conversation that you prefer standard shipping.');
    const anonymous = await say('Which shipping do I prefer?', { sessionId: 'anon-1' });
    expect(anonymous.body.data.reply).not.toContain('shipping');

    const omar = await query(a, { userId: 'omar', query: 'shipping' });
    expect(omar.body.data.edges.map((e: { fact: string }) => e.fact)).toEqual(['user prefers standard shipping']);
    expect(JSON.stringify(omar.body.data)).not.toContain('Dana');
    const stranger = await query(a, { userId: 'nobody', query: 'shipping' });
    expect(stranger.body.data).toEqual({ nodes: [], edges: [], episodes: [] });
  });

  it('invalidates a contradicted fact instead of deleting it (bi-temporal)', async () => {
    const before = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 5));
    await say('Actually I prefer standard shipping now.', { sessionId: 'dana-3', userId: 'dana' });
    const current = await query(a, { userId: 'dana', query: 'shipping' });
    const currentFacts = current.body.data.edges.map((e: { fact: string }) => e.fact);
    expect(currentFacts).toContain('user prefers standard shipping');
    expect(currentFacts).not.toContain('user prefers express shipping');
    // Other facts of the user are untouched.
    expect((await query(a, { userId: 'dana', query: 'tea' })).body.data.edges.map((e: { fact: string }) => e.fact)).toContain('user likes green tea');

    const history = await query(a, { userId: 'dana', query: 'shipping', includeInvalidated: true });
    const old = history.body.data.edges.find((e: { fact: string }) => e.fact === 'user prefers express shipping');
    const replacement = history.body.data.edges.find((e: { fact: string }) => e.fact === 'user prefers standard shipping');
    expect(old.invalidAt).toBe(replacement.validAt);
    expect(old.expiredAt).not.toBeNull();
    expect(replacement.invalidAt).toBeNull();

    const then = await query(a, { userId: 'dana', query: 'shipping', asOf: before });
    expect(then.body.data.edges.map((e: { fact: string }) => e.fact)).toContain('user prefers express shipping');
    expect(then.body.data.edges.map((e: { fact: string }) => e.fact)).not.toContain('user prefers standard shipping');

    await say("I don't like green tea anymore.", { sessionId: 'dana-3', userId: 'dana' });
    expect((await query(a, { userId: 'dana', query: 'tea' })).body.data.edges).toEqual([]);
  });

  it('walks the graph from a named entity within depth, deterministically', async () => {
    const zero = await query(a, { userId: 'dana', entity: 'Portland', depth: 0 });
    expect(zero.body.data.nodes.map((n: { label: string }) => n.label)).toEqual(['Portland']);
    const one = await query(a, { userId: 'dana', entity: 'Portland', depth: 2, limit: 50 });
    const labels = one.body.data.nodes.map((n: { label: string }) => n.label);
    expect(labels[0]).toBe('Portland');
    expect(labels).toEqual(expect.arrayContaining(['dana', 'Dana', 'standard shipping']));
    expect((await query(a, { userId: 'dana', entity: 'Portland', depth: 2, limit: 50 })).body.data).toEqual(one.body.data);
  });

  it('keeps memory inside the tenant and forgets a user entirely on delete by userId', async () => {
    const foreign = await query(b, { userId: 'dana', query: 'shipping' });
    expect(foreign.status).toBe(404); // the agent is not tenant B's
    const rows = await pcall(app, 'POST', '/platform/db/ops', a.accessToken, { body: { operation: 'count', table: 'memory_edges', where: { userId: 'dana' } } });
    expect(rows.body.data.count).toBeGreaterThanOrEqual(4);
    const sessions = await pcall(app, 'POST', '/platform/db/ops', a.accessToken, { body: { operation: 'query', table: 'sessions', where: { agentId, userId: 'dana' } } });
    expect(sessions.body.data.items.map((s: { sessionId: string }) => s.sessionId).sort()).toEqual(['dana-1', 'dana-2', 'dana-3']);
    expect((await pcall(app, 'POST', '/platform/db/ops', b.accessToken, { body: { operation: 'count', table: 'memory_edges', where: { userId: 'dana' } } })).body.data.count).toBe(0);

    const forget = await pcall(app, 'POST', '/platform/db/ops', a.accessToken, { body: { operation: 'delete', table: 'memory_nodes', where: { userId: 'dana' } } });
    expect(forget.status).toBe(200);
    expect(forget.body.data.deleted).toBeGreaterThan(10);
    for (const table of ['memory_nodes', 'memory_edges', 'memory_episodes']) {
      const left = await pcall(app, 'POST', '/platform/db/ops', a.accessToken, { body: { operation: 'count', table, where: { userId: 'dana' } } });
      expect(left.body.data.count, table).toBe(0);
    }
    expect((await query(a, { userId: 'dana' })).body.data).toEqual({ nodes: [], edges: [], episodes: [] });
    expect((await query(a, { userId: 'omar', query: 'shipping' })).body.data.edges).toHaveLength(1);

    // Deleting the agent takes its sessions and its memory of every user with it.
    const count = async (table: string, where: Record<string, string>) =>
      (await pcall(app, 'POST', '/platform/db/ops', a.accessToken, { body: { operation: 'count', table, where } })).body.data.count;
    expect(await count('sessions', { agentId })).toBeGreaterThan(0);
    expect((await pcall(app, 'DELETE', `/platform/agent/${agentId}`, a.accessToken)).status).toBe(200);
    expect(await count('sessions', { agentId })).toBe(0);
    expect(await count('messages', { agentId, sessionId: 'omar-1' })).toBe(0);
    expect(await count('memory_edges', { userId: 'omar' })).toBe(0);
  });
});
