import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { memoryOwner } from '../shared/store/memory-graph';
import { call } from './helpers/http';
import { newTenant, type TestTenant } from './helpers/tenant';
import { testLocal, testRt } from './helpers/runtime';

/**
 * Forking a session at a message, against DynamoDB Local and the built-in engine: the new session
 * has the history up to there, the person's tokenized values open with the new session's vault,
 * an anonymous session's memory comes along only as far as the fork, and the original is unchanged.
 */
const app = createLocalApp(testRt);
const EMAIL = 'dana.reis@example.com';

describe('forking a session', () => {
  let t: TestTenant;
  let agentId: string;
  let sessionId: string;
  let ids: string[];
  const api = (method: string, path: string, body?: unknown) => call(app, method, path, { key: t.apiKey, body });
  const say = async (message: string, session?: string) => {
    const res = await api('POST', `/v1/agents/${agentId}/converse`, { message, ...(session ? { context: { sessionId: session } } : {}) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data as { sessionId: string; messageId: string; reply: string };
  };
  const messagesOf = async (session: string) => (await api('GET', `/v1/agents/${agentId}/sessions/${session}/messages`)).body.data as Array<{ id: string; role: string; content: string; feedback?: unknown }>;
  const memoryOf = async (session: string) => {
    await testLocal.workflowSteps?.drain();
    return testRt.store.memoryGraph.loadMemory(t.scope, memoryOwner({ sessionId: session }).userKey, agentId);
  };

  beforeAll(async () => {
    t = await newTenant();
    agentId = (await api('POST', '/v1/agents', { name: 'Desk', model: 'local/extractive', instructions: 'Help with orders.', guardrails: { pii: { entities: ['email'], action: 'tokenize' } }, memory: { mode: 'rules' } })).body.data.id;
    sessionId = (await say(`My name is Dana and my email is ${EMAIL}.`)).sessionId;
    await say('I live in Lisbon.', sessionId);
    ids = (await messagesOf(sessionId)).map((m) => m.id);
    expect(ids).toHaveLength(4);
    expect((await api('POST', `/v1/agents/${agentId}/sessions/${sessionId}/messages/${ids[1]}/feedback`, { rating: 'up' })).status).toBe(200);
  });

  it('keeps the history up to the message, with the person’s values, and leaves the original as it was', async () => {
    const res = await api('POST', `/v1/agents/${agentId}/sessions/${sessionId}/fork`, { atMessageId: ids[1] });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const fork = res.body.data;
    expect(fork).toMatchObject({ forkedFrom: { sessionId, messageId: ids[1] }, messages: 2 });
    expect(fork.sessionId).toMatch(/^ses_/);
    expect(res.headers.get('location')).toBe(`/v1/agents/${agentId}/sessions/${fork.sessionId}/messages`);

    const forked = await messagesOf(fork.sessionId);
    expect(forked.map((m) => m.id)).toEqual(ids.slice(0, 2));
    // Stored as tokens, shown as given: the vault was sealed again for the new session.
    expect(forked[0]!.content).toBe(`My name is Dana and my email is ${EMAIL}.`);
    const stored = await testRt.store.sessions.allMessages(t.scope, agentId, fork.sessionId);
    expect(stored[0]!.content).not.toContain(EMAIL);
    expect(forked[1]!.feedback).toBeUndefined();
    expect((await messagesOf(sessionId)).map((m) => m.id)).toEqual(ids);

    // What the agent learnt in the session up to the fork comes along; what it learnt after does not.
    const memory = JSON.stringify(await memoryOf(fork.sessionId));
    expect(memory).toContain('Dana');
    expect(memory).not.toContain('Lisbon');
    expect(JSON.stringify(await memoryOf(sessionId))).toContain('Lisbon');

    // The fork goes on by itself, listed among the agent's sessions.
    const next = await say('What is my name?', fork.sessionId);
    expect(next.sessionId).toBe(fork.sessionId);
    expect(await messagesOf(fork.sessionId)).toHaveLength(4);
    expect(await messagesOf(sessionId)).toHaveLength(4);
    const sessions = (await api('GET', `/v1/agents/${agentId}/sessions`)).body.data as Array<{ sessionId: string }>;
    expect(sessions.map((s) => s.sessionId)).toContain(fork.sessionId);
  });

  it('answers 404 for a message of another session, an unknown session or agent, and 400 without atMessageId', async () => {
    const other = await say('Another conversation.');
    const foreign = await api('POST', `/v1/agents/${agentId}/sessions/${sessionId}/fork`, { atMessageId: other.messageId });
    expect(foreign.status).toBe(404);
    expect((await api('POST', `/v1/agents/${agentId}/sessions/ses_nothing/fork`, { atMessageId: ids[0] })).status).toBe(404);
    expect((await api('POST', `/v1/agents/agt_missing/sessions/${sessionId}/fork`, { atMessageId: ids[0] })).status).toBe(404);
    const missing = await api('POST', `/v1/agents/${agentId}/sessions/${sessionId}/fork`, {});
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.field).toBe('atMessageId');
    const stranger = await newTenant();
    expect((await call(app, 'POST', `/v1/agents/${agentId}/sessions/${sessionId}/fork`, { key: stranger.apiKey, body: { atMessageId: ids[0] } })).status).toBe(404);
  });
});
