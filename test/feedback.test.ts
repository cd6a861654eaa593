import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { testLocal, testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/**
 * Feedback on replies: converse names the stored reply (data.messageId, or cairn.messageId with
 * OpenAI's store: true), a rating is kept with the message and counted in usage, and a rated reply
 * becomes an evaluation case with its question.
 */
const app = createLocalApp(testRt);

describe('feedback on replies', () => {
  let t: TestTenant;
  let agentId: string;
  const api = (method: string, path: string, body?: unknown) => call(app, method, path, { key: t.apiKey, ...(body === undefined ? {} : { body }) });
  const feedback = (sessionId: string, messageId: string, body: unknown) => api('POST', `/v1/agents/${agentId}/sessions/${sessionId}/messages/${messageId}/feedback`, body);
  const today = () => new Date().toISOString().slice(0, 10);
  const counted = async () => (await api('GET', `/v1/usage?groupBy=agent&from=${today()}&to=${today()}`)).body.data.rows.find((r: { group: string }) => r.group === agentId);

  beforeAll(async () => {
    t = await newTenant();
    const ksId = (await api('POST', '/v1/knowledge-sources', { name: 'Help', type: 'file-collection', files: [{ path: 'returns.md', content: '# Returns\n\nItems can be returned within 30 days of delivery.' }] })).body.data.id;
    await api('POST', `/v1/knowledge-sources/${ksId}/connect`, {});
    await testLocal.ingestion!.drain();
    agentId = (await api('POST', '/v1/agents', { name: 'Support', model: 'local/extractive', capabilities: ['chat', 'document-search'], knowledgeSourceIds: [ksId] })).body.data.id;
  });

  it('keeps a rating with the reply, shows it with the messages, and moves the usage count when it changes', async () => {
    const turn = (await api('POST', `/v1/agents/${agentId}/converse`, { message: 'How long do I have to return an item?' })).body.data;
    expect(turn.messageId).toMatch(/^msg_/);
    const listed = (await api('GET', `/v1/agents/${agentId}/sessions/${turn.sessionId}/messages`)).body.data;
    expect(listed.map((m: { id: string; role: string }) => [m.role, m.id === turn.messageId])).toEqual([
      ['user', false],
      ['assistant', true],
    ]);

    const up = await feedback(turn.sessionId, turn.messageId, { rating: 'up', comment: 'Exactly right' });
    expect(up.status).toBe(200);
    expect(up.body.data).toMatchObject({ id: turn.messageId, role: 'assistant', feedback: { rating: 'up', comment: 'Exactly right' } });
    // The rating is a span of the request's trace, labelled with the agent and the rating.
    const trace = (await api('GET', `/v1/traces/${up.headers.get('x-request-id')}`)).body.data;
    expect(trace.spans.find((s: { name: string }) => s.name === 'feedback up').attributes).toMatchObject({ 'cairn.agent.id': agentId, 'cairn.feedback.rating': 'up', 'cairn.agent.version': 'draft' });
    expect((await counted())).toMatchObject({ feedbackUp: 1, feedbackDown: 0 });
    // The same rating again counts once; a changed one moves from up to down.
    await feedback(turn.sessionId, turn.messageId, { rating: 'up' });
    expect((await counted())).toMatchObject({ feedbackUp: 1, feedbackDown: 0 });
    await feedback(turn.sessionId, turn.messageId, { rating: 'down', comment: 'Too short' });
    expect((await counted())).toMatchObject({ feedbackUp: 0, feedbackDown: 1 });
    const after = (await api('GET', `/v1/agents/${agentId}/sessions/${turn.sessionId}/messages`)).body.data[1];
    expect(after.feedback).toMatchObject({ rating: 'down', comment: 'Too short' });
  });

  it('refuses a bad rating, a user message, and an unknown message, agent or session', async () => {
    const turn = (await api('POST', `/v1/agents/${agentId}/converse`, { message: 'Can I return it?' })).body.data;
    const bad = await feedback(turn.sessionId, turn.messageId, { rating: 'meh' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('rating');
    const question = (await api('GET', `/v1/agents/${agentId}/sessions/${turn.sessionId}/messages`)).body.data[0];
    const onQuestion = await feedback(turn.sessionId, question.id, { rating: 'up' });
    expect(onQuestion.status).toBe(400);
    expect(onQuestion.body.error.message).toContain('messageId');
    expect((await feedback(turn.sessionId, 'msg_nope', { rating: 'up' })).status).toBe(404);
    expect((await feedback('ses_nope', turn.messageId, { rating: 'up' })).status).toBe(404);
    expect((await call(app, 'POST', `/v1/agents/agt_nope/sessions/${turn.sessionId}/messages/${turn.messageId}/feedback`, { key: t.apiKey, body: { rating: 'up' } })).status).toBe(404);
    // Another tenant cannot rate it.
    const other = await newTenant();
    expect((await call(app, 'POST', `/v1/agents/${agentId}/sessions/${turn.sessionId}/messages/${turn.messageId}/feedback`, { key: other.apiKey, body: { rating: 'up' } })).status).toBe(404);
  });

  it('stores an OpenAI exchange only when asked, and names it in cairn', async () => {
    const ask = (extra: Record<string, unknown>) => call(app, 'POST', '/v1/chat/completions', { headers: { authorization: `Bearer ${t.apiKey}` }, body: { model: agentId, messages: [{ role: 'user', content: 'How long do I have to return an item?' }], ...extra } });
    const unstored = (await ask({})).body;
    expect(unstored.cairn.messageId).toBeUndefined();
    const stored = (await ask({ store: true })).body;
    expect(stored.cairn).toMatchObject({ sessionId: expect.stringMatching(/^ses_/), messageId: expect.stringMatching(/^msg_/) });
    expect((await feedback(stored.cairn.sessionId, stored.cairn.messageId, { rating: 'up' })).status).toBe(200);
    const responses = await call(app, 'POST', '/v1/responses', { headers: { authorization: `Bearer ${t.apiKey}` }, body: { model: agentId, input: 'How long do I have to return an item?', store: true } });
    expect(responses.body.cairn.messageId).toMatch(/^msg_/);
  });

  it('turns a rated reply and its question into an evaluation case', async () => {
    const turn = (await api('POST', `/v1/agents/${agentId}/converse`, { message: 'How long do I have to return an item?' })).body.data;
    await feedback(turn.sessionId, turn.messageId, { rating: 'up', comment: 'Good' });
    const datasetId = (await api('POST', '/v1/eval-datasets', { name: 'From feedback' })).body.data.id;
    const fromMessage = { agentId, sessionId: turn.sessionId, messageId: turn.messageId };
    const added = await api('POST', `/v1/eval-datasets/${datasetId}/cases`, { fromMessage });
    expect(added.status).toBe(200);
    expect(added.body.data.added).toBe(1);
    // A reply rated down gets the expectation the caller gives; without one, none.
    const down = (await api('POST', `/v1/agents/${agentId}/converse`, { message: 'Can I return shoes?' })).body.data;
    await feedback(down.sessionId, down.messageId, { rating: 'down', comment: 'Wrong' });
    await api('POST', `/v1/eval-datasets/${datasetId}/cases`, { fromMessage: { agentId, sessionId: down.sessionId, messageId: down.messageId }, expected: { contains: ['30 days'] }, metadata: { ticket: 'T-9' } });
    const [kept, fixed] = (await api('GET', `/v1/eval-datasets/${datasetId}/cases`)).body.data;
    expect(kept).toMatchObject({ input: 'How long do I have to return an item?', expected: { answer: turn.reply, sources: ['returns.md'] }, metadata: { fromMessage, feedback: { rating: 'up', comment: 'Good' }, model: 'local/extractive' } });
    expect(fixed).toMatchObject({ input: 'Can I return shoes?', expected: { contains: ['30 days'] }, metadata: { ticket: 'T-9', reply: down.reply, feedback: { rating: 'down' } } });

    const both = await api('POST', `/v1/eval-datasets/${datasetId}/cases`, { fromMessage, cases: [{ input: 'x' }] });
    expect(both.status).toBe(400);
    expect((await api('POST', `/v1/eval-datasets/${datasetId}/cases`, { fromMessage: { ...fromMessage, messageId: 'msg_nope' } })).status).toBe(404);
    expect((await api('GET', `/v1/eval-datasets/${datasetId}`)).body.data.caseCount).toBe(2);
  });
});
