import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { memoryOwner } from '../shared/store/memory-graph';
import { call } from './helpers/http';
import { testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/**
 * A person's data on request: everything the tenant's agents keep about one end user, exported
 * (values the guardrails tokenized shown as given) and erased (the memory's history too), with
 * other people's data untouched and another tenant unable to reach it.
 */
const app = createLocalApp(testRt);

describe('end users: export and erase', () => {
  let t: TestTenant;
  let support: string;
  let sales: string;
  const api = (method: string, path: string, body?: unknown) => call(app, method, path, { key: t.apiKey, ...(body === undefined ? {} : { body }) });
  const say = (agentId: string, message: string, userId: string, sessionId?: string) => api('POST', `/v1/agents/${agentId}/converse`, { message, context: { userId, ...(sessionId ? { sessionId } : {}) } });

  beforeAll(async () => {
    t = await newTenant();
    support = (await api('POST', '/v1/agents', { name: 'Support', model: 'local/extractive', guardrails: { pii: { entities: ['email'], action: 'tokenize' } } })).body.data.id;
    sales = (await api('POST', '/v1/agents', { name: 'Sales', model: 'local/extractive' })).body.data.id;
  });

  it('exports every session, message, rating and memory of one person, and erases them all', async () => {
    const first = (await say(support, 'I am Ana from Lisbon and my email is ana@example.com', 'ana')).body.data;
    await say(support, 'I prefer express shipping', 'ana', first.sessionId);
    await api('POST', `/v1/agents/${support}/sessions/${first.sessionId}/messages/${first.messageId}/feedback`, { rating: 'up' });
    await say(sales, 'Do you sell gift cards?', 'ana');
    const bob = (await say(sales, 'I am Bob from Porto', 'bob')).body.data;

    const exported = (await api('GET', '/v1/end-users/ana/export')).body.data;
    expect(exported.sessions).toHaveLength(2);
    expect(exported.sessions.flatMap((s: { messages: unknown[] }) => s.messages)).toHaveLength(6);
    const supportSession = exported.sessions.find((s: { agentId: string }) => s.agentId === support);
    // Stored as a token, exported as given.
    expect(supportSession.messages[0].content).toBe('I am Ana from Lisbon and my email is ana@example.com');
    expect(exported.feedback).toEqual([expect.objectContaining({ agentId: support, messageId: first.messageId, rating: 'up' })]);
    expect(exported.memory.nodes.length).toBeGreaterThan(0);
    expect(JSON.stringify(exported.memory.edges)).toContain('express shipping');
    expect(JSON.stringify(exported)).not.toContain('Porto');

    const erased = (await api('DELETE', '/v1/end-users/ana')).body.data;
    expect(erased).toMatchObject({ userId: 'ana', deleted: true, removed: { sessions: 2, messages: 6 } });
    expect(erased.removed.memoryItems).toBeGreaterThan(0);
    const after = (await api('GET', '/v1/end-users/ana/export')).body.data;
    expect(after).toMatchObject({ sessions: [], feedback: [], memory: { nodes: [], edges: [], episodes: [] } });
    expect(await testRt.store.memoryGraph.memoryOf(t.scope, memoryOwner({ userId: 'ana' }).userKey)).toEqual([]);
    expect(await testRt.store.sessions.getVault(t.scope, support, first.sessionId)).toBeUndefined();
    // Bob is untouched.
    expect((await api('GET', `/v1/agents/${sales}/sessions/${bob.sessionId}/messages`)).body.data).toHaveLength(2);
    expect((await api('GET', '/v1/end-users/bob/export')).body.data.sessions).toHaveLength(1);
  });

  it('keeps each tenant to its own people, and refuses an id that cannot be one', async () => {
    await say(sales, 'Hello', 'carla');
    const other = await newTenant();
    const elsewhere = (await call(app, 'GET', '/v1/end-users/carla/export', { key: other.apiKey })).body.data;
    expect(elsewhere.sessions).toEqual([]);
    expect((await call(app, 'DELETE', '/v1/end-users/carla', { key: other.apiKey })).body.data.removed).toEqual({ sessions: 0, messages: 0, memoryItems: 0, connections: 0 });
    expect((await api('GET', '/v1/end-users/carla/export')).body.data.sessions).toHaveLength(1);
    expect((await api('GET', `/v1/end-users/${encodeURIComponent('a b')}/export`)).status).toBe(400);
  });
});
