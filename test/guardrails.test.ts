import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import type { Runtime } from '../shared/runtime';
import { call } from './helpers/http';
import { modelsWithStandIn, testRt } from './helpers/runtime';
import { parseSse } from './helpers/sse';
import { newTenant, type TestTenant } from './helpers/tenant';
import { pcall, provision } from './helpers/platform';
import { testPlatformSecrets } from './helpers/runtime';

/**
 * Guardrails at the wire: an OpenAI stand-in records every request body and answers by repeating
 * the person's last message (what it was given, tokens and all), streamed in small chunks that cut
 * tokens apart. Nothing the person wrote that the rules name may reach it; the person sees their
 * own values; the session keeps tokens and a sealed vault.
 */
const bodies: string[] = [];
let replyWith: ((said: string) => string) | undefined;
const provider = createServer((req, res) => {
  let raw = '';
  req.on('data', (c: Buffer) => (raw += c.toString()));
  req.on('end', () => {
    bodies.push(raw);
    const body = JSON.parse(raw) as { messages: Array<{ role: string; content: string }>; stream?: boolean };
    const said = body.messages.filter((m) => m.role === 'user').at(-1)!.content;
    const text = replyWith ? replyWith(said) : `You said: ${said}. Done.`;
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1764115200, model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage: { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 } }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    // Four characters a chunk: every token and value is cut across deltas.
    for (let i = 0; i < text.length; i += 4) res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: text.slice(i, i + 4) } }] })}\n\n`);
    res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 20, completion_tokens: 10 } })}\n\n`);
    res.end('data: [DONE]\n\n');
  });
});

let rt: Runtime;
let t: TestTenant;
const app = () => createLocalApp(rt);
const api = (method: string, path: string, body?: unknown) => call(app(), method, path, { key: t.apiKey, ...(body === undefined ? {} : { body }) });
const agentWith = async (guardrails: unknown) => (await api('POST', '/v1/agents', { name: 'Guarded', model: 'openai/gpt-4o', guardrails })).body.data.id as string;
const sentSince = (n: number) => bodies.slice(n).join('\n');

const EMAIL = 'ana.silva@example.com';
const CARD = '4111 1111 1111 1111';

beforeAll(async () => {
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  rt = { ...testRt, models: modelsWithStandIn(provider) };
  t = await newTenant();
});
afterAll(() => new Promise<void>((resolve) => provider.close(() => resolve())));

describe('guardrails: tokenize', () => {
  it('sends tokens, shows values, keeps tokens and a sealed vault, and never sends a value on later turns', async () => {
    const agentId = await agentWith({ pii: { entities: ['email', 'credit_card', 'phone'], action: 'tokenize' } });
    const before = bodies.length;
    const turn = await api('POST', `/v1/agents/${agentId}/converse`, { message: `Refund to card ${CARD}, mail ${EMAIL}` });
    expect(turn.status).toBe(200);
    const sent = sentSince(before);
    expect(sent).not.toContain(EMAIL);
    expect(sent).not.toContain('4111');
    expect(sent).toContain('<CREDIT_CARD_1>');
    expect(sent).toContain('<EMAIL_1>');
    // The provider repeated the tokens; the person sees their values.
    expect(turn.body.data.reply).toBe(`You said: Refund to card ${CARD}, mail ${EMAIL}. Done.`);
    expect(turn.body.data.guardrails).toEqual([
      { type: 'pii', entity: 'credit_card', action: 'tokenize', where: 'input', enforced: true },
      { type: 'pii', entity: 'email', action: 'tokenize', where: 'input', enforced: true },
    ]);
    const { sessionId } = turn.body.data;
    // Stored as tokens; the messages API restores them from the vault.
    const stored = await rt.store.sessions.listMessages(t.scope, agentId, sessionId, { limit: 10 });
    expect(JSON.stringify(stored.items)).not.toContain(EMAIL);
    expect(stored.items[0]!.content).toBe('Refund to card <CREDIT_CARD_1>, mail <EMAIL_1>');
    const shown = (await api('GET', `/v1/agents/${agentId}/sessions/${sessionId}/messages`)).body.data;
    expect(shown[0].content).toBe(`Refund to card ${CARD}, mail ${EMAIL}`);
    const vault = await rt.store.sessions.getVault(t.scope, agentId, sessionId);
    expect(JSON.stringify(vault)).not.toContain(EMAIL);

    // The next turn: the history goes as tokens, and the same value gets the same token.
    const later = bodies.length;
    const again = await api('POST', `/v1/agents/${agentId}/converse`, { message: `Also write to ${EMAIL} and call +1 (415) 555-0132`, context: { sessionId } });
    const sentAgain = sentSince(later);
    expect(sentAgain).not.toContain(EMAIL);
    expect(sentAgain).not.toContain('555-0132');
    expect(sentAgain).toContain('Also write to <EMAIL_1> and call <PHONE_1>');
    expect(again.body.data.reply).toContain(`Also write to ${EMAIL} and call +1 (415) 555-0132`);
  });

  it('restores a token cut across streamed deltas whole', async () => {
    const agentId = await agentWith({ pii: { entities: ['email'], action: 'tokenize' } });
    const res = await app().request('/v1/agents/' + agentId + '/converse', { method: 'POST', headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify({ message: `Write to ${EMAIL}. Thanks` }) });
    const events = parseSse(await res.text());
    const deltas = events.filter((e) => e.event === 'delta').map((e) => (JSON.parse(e.data) as { text: string }).text);
    expect(deltas.join('')).toBe(`You said: Write to ${EMAIL}. Thanks. Done.`);
    expect(deltas.some((d) => d.includes('<') || d.includes('EMAIL'))).toBe(false);
    const done = JSON.parse(events.find((e) => e.event === 'done')!.data) as { reply: string; guardrails: unknown[] };
    expect(done.reply).toBe(`You said: Write to ${EMAIL}. Thanks. Done.`);
    expect(done.guardrails).toHaveLength(1);
  });
});

describe('guardrails: mask, block, topics, words, detect', () => {
  it('masks values everywhere and keeps no original', async () => {
    const agentId = await agentWith({ pii: { entities: ['email', 'iban'], action: 'mask' } });
    const before = bodies.length;
    const turn = (await api('POST', `/v1/agents/${agentId}/converse`, { message: `Pay DE89 3704 0044 0532 0130 00 and mail ${EMAIL}` })).body.data;
    expect(sentSince(before)).toContain('Pay [IBAN] and mail [EMAIL]');
    expect(sentSince(before)).not.toContain('DE89');
    expect(turn.reply).toBe('You said: Pay [IBAN] and mail [EMAIL]. Done.');
    const stored = await rt.store.sessions.listMessages(t.scope, agentId, turn.sessionId, { limit: 10 });
    expect(JSON.stringify(stored.items)).not.toMatch(/DE89|ana\.silva/);
    expect(await rt.store.sessions.getVault(t.scope, agentId, turn.sessionId)).toBeUndefined();
  });

  it('blocks a message with a value, a denied topic or a blocked word without calling the provider', async () => {
    const agentId = await agentWith({
      pii: { entities: ['us_ssn'], action: 'block' },
      deniedTopics: [{ name: 'investment advice', phrases: ['buy crypto', 'which stocks'] }],
      blockedWords: ['darn'],
      blockedMessage: 'I can only help with orders.',
    });
    const before = bodies.length;
    for (const [message, finding] of [
      ['My SSN is 123-45-6789', { type: 'pii', entity: 'us_ssn', action: 'block', where: 'input' }],
      ['Should I be buying crypto this week?', { type: 'denied_topic', name: 'investment advice', action: 'block', where: 'input' }],
      ['This darn order is late', { type: 'blocked_word', name: 'darn', action: 'block', where: 'input' }],
    ] as const) {
      const turn = (await api('POST', `/v1/agents/${agentId}/converse`, { message })).body.data;
      expect(turn).toMatchObject({ status: 'blocked', reply: 'I can only help with orders.', guardrails: [{ ...finding, enforced: true }] });
      const stored = await rt.store.sessions.listMessages(t.scope, agentId, turn.sessionId, { limit: 10 });
      expect(JSON.stringify(stored.items)).not.toContain('123-45-6789');
    }
    expect(bodies.length).toBe(before);
    // A message that names none of it goes through (its reply, and the memory of it, asked of the model).
    expect((await api('POST', `/v1/agents/${agentId}/converse`, { message: 'Where is my order?' })).body.data.status).toBe('completed');
    expect(bodies.length).toBeGreaterThan(before);
  });

  it('refuses a reply with a blocked word, and masks a value the person did not give', async () => {
    const agentId = await agentWith({ pii: { entities: ['email'], action: 'tokenize' }, blockedWords: ['confidential'] });
    replyWith = () => 'This is confidential.';
    const refused = (await api('POST', `/v1/agents/${agentId}/converse`, { message: 'Tell me' })).body.data;
    expect(refused).toMatchObject({ status: 'blocked', reply: "Sorry, I can't help with that.", guardrails: [{ type: 'blocked_word', name: 'confidential', where: 'output' }] });
    replyWith = () => 'Write to boss@corp.example instead.';
    const masked = (await api('POST', `/v1/agents/${agentId}/converse`, { message: 'Who do I write to?' })).body.data;
    expect(masked.reply).toBe('Write to [EMAIL] instead.');
    expect(masked.guardrails).toEqual([{ type: 'pii', entity: 'email', action: 'mask', where: 'output', enforced: true }]);
    replyWith = undefined;
  });

  it('in detect mode reports what it finds and changes nothing, and usage counts the findings', async () => {
    const agentId = await agentWith({ mode: 'detect', pii: { entities: ['email'], action: 'block' }, blockedWords: ['darn'] });
    const before = bodies.length;
    const turnRes = await api('POST', `/v1/agents/${agentId}/converse`, { message: `darn, write to ${EMAIL}` });
    const turn = turnRes.body.data;
    expect(sentSince(before)).toContain(EMAIL);
    expect(turn.status).toBe('completed');
    expect(turn.guardrails).toEqual([
      { type: 'blocked_word', name: 'darn', action: 'block', where: 'input', enforced: false },
      { type: 'pii', entity: 'email', action: 'block', where: 'input', enforced: false },
      { type: 'blocked_word', name: 'darn', action: 'block', where: 'output', enforced: false },
    ]);
    // Each finding is an event of the request's span (the value itself is never recorded).
    const trace = (await api('GET', `/v1/traces/${turnRes.headers.get('x-request-id')}`)).body.data;
    const events = trace.spans.flatMap((s: { events?: Array<{ name: string; attributes: Record<string, unknown> }> }) => s.events ?? []);
    expect(events.filter((e: { name: string }) => e.name === 'cairn.guardrail').map((e: { attributes: Record<string, unknown> }) => e.attributes['cairn.guardrail.type'])).toEqual(['blocked_word', 'pii', 'blocked_word']);
    expect(JSON.stringify(trace)).not.toContain(EMAIL);
    const today = new Date().toISOString().slice(0, 10);
    const row = (await api('GET', `/v1/usage?groupBy=agent&from=${today}&to=${today}`)).body.data.rows.find((r: { group: string }) => r.group === agentId);
    expect(row.guardrailFindings).toBe(3);
  });

  it('refuses guardrails that cannot work, naming the field', async () => {
    const bad = await api('POST', '/v1/agents', { name: 'X', model: 'openai/gpt-4o', guardrails: { pii: { entities: ['passport'], action: 'mask' } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('guardrails.pii.entities');
    const stop = await api('POST', '/v1/agents', { name: 'X', model: 'openai/gpt-4o', guardrails: { deniedTopics: [{ name: 'x', phrases: ['the of and'] }] } });
    expect(stop.status).toBe(400);
    expect(stop.body.error.message).toContain('guardrails.deniedTopics[0].phrases[0]');
  });
});

describe('guardrails: a tenant default', () => {
  it('holds for every agent of the tenant, and an agent’s own extend it', async () => {
    const tenant = await provision(app(), testPlatformSecrets.adminToken);
    const set = await pcall(app(), 'PUT', '/platform/guardrails', tenant.accessToken, { body: { pii: { entities: ['email'], action: 'mask' }, blockedMessage: 'Not here.' } });
    expect(set.status).toBe(200);
    expect((await pcall(app(), 'GET', '/platform/guardrails', tenant.accessToken)).body.data.guardrails).toMatchObject({ pii: { entities: ['email'], action: 'mask' } });
    const own = (path: string, body: unknown) => call(app(), 'POST', path, { key: tenant.apiKey, body });
    const plain = (await own('/v1/agents', { name: 'Plain', model: 'openai/gpt-4o' })).body.data.id;
    const strict = (await own('/v1/agents', { name: 'Strict', model: 'openai/gpt-4o', guardrails: { blockedWords: ['darn'] } })).body.data.id;
    const before = bodies.length;
    expect((await own(`/v1/agents/${plain}/converse`, { message: `mail ${EMAIL}` })).body.data.reply).toBe('You said: mail [EMAIL]. Done.');
    expect(sentSince(before)).not.toContain(EMAIL);
    expect((await own(`/v1/agents/${strict}/converse`, { message: 'darn it' })).body.data).toMatchObject({ status: 'blocked', reply: 'Not here.' });
    expect((await own(`/v1/agents/${strict}/converse`, { message: `mail ${EMAIL}` })).body.data.reply).toBe('You said: mail [EMAIL]. Done.');
    expect((await pcall(app(), 'DELETE', '/platform/guardrails', tenant.accessToken)).body.data.guardrails).toBeNull();
    expect((await own(`/v1/agents/${plain}/converse`, { message: `mail ${EMAIL}` })).body.data.reply).toContain(EMAIL);
  });
});
