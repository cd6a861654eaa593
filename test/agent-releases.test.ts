import { z } from 'zod';
import { beforeAll, describe, expect, it } from 'vitest';
import { storedAgent } from '../shared/agents';
import type { BaseRecord } from '../shared/store/records';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { pcall, platformTestSecrets, provision } from './helpers/platform';
import { testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/**
 * An agent's releases through the API: the draft published as numbered, immutable versions;
 * diffs that never show a secret; aliases routing new sessions by weight while sessions keep
 * their version; and every reply saying which definition ran.
 */
const app = createLocalApp(testRt);
const tool = (token: string) => ({ type: 'http', name: 'orders', description: 'Looks up an order', url: 'https://shop.example/orders/{{id}}', parameters: { type: 'object', properties: { id: { type: 'string' } } }, auth: { type: 'bearer', token } });

describe('agent versions and aliases', () => {
  let t: TestTenant;
  let agentId: string;
  const api = (method: string, path: string, body?: unknown) => call(app, method, path, { key: t.apiKey, ...(body === undefined ? {} : { body }) });
  const converse = (body: Record<string, unknown>) => api('POST', `/v1/agents/${agentId}/converse`, { message: 'hello there', ...body });

  beforeAll(async () => {
    t = await newTenant();
    const created = await api('POST', '/v1/agents', { name: 'Releases', model: 'local/extractive', instructions: 'first', tools: [tool('secret-token-one')] });
    agentId = created.body.data.id;
  });

  it('publishes the draft as numbered versions that later edits do not change, newest first in pages', async () => {
    const v1 = await api('POST', `/v1/agents/${agentId}/versions`, { description: 'first release' });
    expect(v1.status).toBe(201);
    expect(v1.headers.get('location')).toBe(`/v1/agents/${agentId}/versions/1`);
    expect(v1.body.data).toMatchObject({ agentId, version: 1, description: 'first release', agent: { id: agentId, instructions: 'first', tools: [{ name: 'orders', auth: { type: 'bearer', configured: true } }] } });
    expect(JSON.stringify(v1.body)).not.toContain('secret-token-one');
    expect(JSON.stringify(v1.body)).not.toContain('sealed');
    await api('PUT', `/v1/agents/${agentId}`, { name: 'Releases', model: 'local/extractive', instructions: 'second', tools: [tool('secret-token-two')] });
    const v2 = await api('POST', `/v1/agents/${agentId}/versions`);
    expect(v2.status).toBe(201);
    expect(v2.body.data).toMatchObject({ version: 2, description: '', agent: { instructions: 'second' } });
    expect((await api('GET', `/v1/agents/${agentId}/versions/1`)).body.data.agent.instructions).toBe('first');
    const page1 = await api('GET', `/v1/agents/${agentId}/versions?limit=1`);
    expect(page1.body.data.map((v: { version: number }) => v.version)).toEqual([2]);
    expect(page1.body.meta.pagination.hasMore).toBe(true);
    const page2 = await api('GET', `/v1/agents/${agentId}/versions?limit=1&cursor=${encodeURIComponent(page1.body.meta.pagination.nextCursor)}`);
    expect(page2.body.data.map((v: { version: number }) => v.version)).toEqual([1]);
    expect(page2.body.meta.pagination.hasMore).toBe(false);
  });

  it('answers 404 naming an unknown version or alias, and 400 for a version that is not a number', async () => {
    const unknown = await api('GET', `/v1/agents/${agentId}/versions/99`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toContain(`${agentId}:99`);
    expect((await api('GET', `/v1/agents/${agentId}/aliases/nope`)).status).toBe(404);
    expect((await converse({ alias: 'nope' })).status).toBe(404);
    expect((await converse({ version: 99 })).status).toBe(404);
    const word = await api('GET', `/v1/agents/${agentId}/versions/latest`);
    expect(word.status).toBe(400);
    expect(word.body.error.details.field).toBe('version');
    expect((await api('GET', '/v1/agents/agt_01kaaaaaaaaaaaaaaaaaaaaaaa/versions')).status).toBe(404);
  });

  it('diffs two versions, or a version and the draft, as an RFC 6902 patch that says a secret changed without showing it', async () => {
    const diff = await api('GET', `/v1/agents/${agentId}/versions/1/diff?against=2`);
    expect(diff.status).toBe(200);
    expect(diff.body.data.from).toBe(1);
    expect(diff.body.data.to).toBe(2);
    expect(diff.body.data.changes).toEqual(
      expect.arrayContaining([
        { op: 'replace', path: '/instructions', value: 'second' },
        { op: 'replace', path: '/tools/0/auth/sealed', value: '[secret changed]' },
      ]),
    );
    const text = JSON.stringify(diff.body);
    for (const hidden of ['secret-token', '"iv"', '"tag"', 'updatedAt']) expect(text).not.toContain(hidden);
    await api('PUT', `/v1/agents/${agentId}`, { name: 'Releases', model: 'local/extractive', instructions: 'second', temperature: 1.5, tools: [{ ...tool('x'), auth: { type: 'bearer', configured: true } }] });
    const toDraft = await api('GET', `/v1/agents/${agentId}/versions/2/diff`);
    expect(toDraft.body.data).toEqual({ from: 2, to: 'draft', changes: [{ op: 'replace', path: '/temperature', value: 1.5 }] });
    expect((await api('GET', `/v1/agents/${agentId}/versions/2/diff?against=2`)).body.data.changes).toEqual([]);
  });

  it('refuses bad routing with a 400 naming routing[i]…, and reserved or malformed alias names', async () => {
    const cases: Array<[string, unknown, string]> = [
      ['live', { routing: [{ version: 1, weight: 60 }, { version: 2, weight: 30 }] }, 'routing[1].weight'],
      ['live', { routing: [{ version: 7, weight: 100 }] }, 'routing[0].version'],
      ['live', { routing: [{ version: 1 }, { version: 2 }] }, 'routing[1].weight'],
      ['live', { routing: [{ version: 1, weight: 50 }, { version: 1, weight: 50 }] }, 'routing[1].version'],
      ['live', { routing: [1, 2, 1, 2, 1].map((version, i) => ({ version: version + i * 0, weight: 20 })) }, 'routing'],
      ['draft', { routing: [{ version: 1 }] }, 'alias'],
      ['Live', { routing: [{ version: 1 }] }, 'alias'],
    ];
    for (const [name, body, field] of cases) {
      const res = await api('PUT', `/v1/agents/${agentId}/aliases/${name}`, body);
      expect(res.status, `${name} ${JSON.stringify(body)}`).toBe(400);
      expect(res.body.error.details.field, `${name} ${JSON.stringify(body)}`).toBe(field);
    }
    expect((await api('GET', `/v1/agents/${agentId}/aliases`)).body.data).toEqual([]);
  });

  it('splits new sessions by weight, keeps each session on its version while the alias routes to it, and rolls back', async () => {
    const live = await api('PUT', `/v1/agents/${agentId}/aliases/live`, { routing: [{ version: 1, weight: 90 }, { version: 2 }] });
    expect(live.status).toBe(200);
    expect(live.body.data).toMatchObject({ agentId, name: 'live', routing: [{ version: 1, weight: 90 }, { version: 2, weight: 10 }] });
    const sessions = await Promise.all(Array.from({ length: 100 }, (_, i) => converse({ alias: 'live', context: { sessionId: `split-${i}` } })));
    const counts = { 1: 0, 2: 0 } as Record<number, number>;
    for (const s of sessions) counts[s.body.data.agentVersion as number]! += 1;
    expect(counts[1]! + counts[2]!).toBe(100);
    expect(counts[1]).toBeGreaterThanOrEqual(80);
    expect(counts[2]).toBeGreaterThanOrEqual(3);
    const onTwo = sessions.find((s) => s.body.data.agentVersion === 2)!.body.data.sessionId as string;
    const onOne = sessions.find((s) => s.body.data.agentVersion === 1)!.body.data.sessionId as string;
    // The weights change but the alias still routes to both: each session stays where it was.
    await api('PUT', `/v1/agents/${agentId}/aliases/live`, { routing: [{ version: 1, weight: 10 }, { version: 2, weight: 90 }] });
    expect((await converse({ alias: 'live', context: { sessionId: onOne } })).body.data.agentVersion).toBe(1);
    expect((await converse({ alias: 'live', context: { sessionId: onTwo } })).body.data.agentVersion).toBe(2);
    // Roll back: every session moves to version 1, the only one routed to now.
    await api('PUT', `/v1/agents/${agentId}/aliases/live`, { routing: [{ version: 1 }] });
    expect((await converse({ alias: 'live', context: { sessionId: onTwo } })).body.data.agentVersion).toBe(1);
    const messages = await api('GET', `/v1/agents/${agentId}/sessions/${onTwo}/messages`);
    // Three turns: placed on 2, kept on 2, rolled back to 1 (question and reply each).
    expect(messages.body.data.map((m: { agentVersion: number }) => m.agentVersion)).toEqual([2, 2, 2, 2, 1, 1]);
  });

  it('runs a version by number or the draft, and says so on each reply', async () => {
    expect((await converse({ version: 2 })).body.data.agentVersion).toBe(2);
    expect((await converse({})).body.data.agentVersion).toBe('draft');
    expect((await converse({ alias: 'draft' })).body.data.agentVersion).toBe('draft');
    // Usage by version: each definition that answered is a row of its own.
    const usage = await api('GET', '/v1/usage?groupBy=agentVersion');
    expect(usage.status).toBe(200);
    const groups = usage.body.data.rows.map((r: { group: string }) => r.group);
    expect(groups).toEqual(expect.arrayContaining([`${agentId}:1`, `${agentId}:2`, `${agentId}:draft`]));
    expect(usage.body.data.rows.find((r: { group: string }) => r.group === `${agentId}:2`).requests).toBeGreaterThan(0);
    const both = await converse({ alias: 'live', version: 1 });
    expect(both.status).toBe(400);
    expect(both.body.error.details.field).toBe('version');
  });

  it('takes <agentId>:<alias|version> as the model on the OpenAI-compatible routes, lists aliases as models, and says what ran', async () => {
    const chat = (model: string, stream = false) => api('POST', '/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hello there' }], stream });
    const byAlias = await chat(`${agentId}:live`);
    expect(byAlias.status).toBe(200);
    expect(byAlias.body.model).toBe(`${agentId}:live`);
    expect(byAlias.body.cairn.agentVersion).toBe(1);
    expect((await chat(`${agentId}:2`)).body.cairn.agentVersion).toBe(2);
    expect((await chat(agentId)).body.cairn.agentVersion).toBe('draft');
    expect((await chat(`${agentId}:draft`)).body.cairn.agentVersion).toBe('draft');
    const streamed = await chat(`${agentId}:2`, true);
    const chunks = String(streamed.body).split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)));
    expect(chunks.at(-1).cairn.agentVersion).toBe(2);
    const response = await api('POST', '/v1/responses', { model: `${agentId}:live`, input: 'hello there' });
    expect(response.body.cairn.agentVersion).toBe(1);
    for (const [model, status, code] of [[`${agentId}:nope`, 404, 'not_found'], [`${agentId}:9`, 404, 'not_found'], [`${agentId}:Bad Alias`, 400, 'invalid_request']] as const) {
      const res = await chat(model);
      expect(res.status, model).toBe(status);
      expect(res.body.error.code, model).toBe(code);
    }
    const models = await api('GET', '/v1/models');
    expect(models.body.data.map((m: { id: string }) => m.id)).toEqual(expect.arrayContaining([agentId, `${agentId}:live`]));
    expect((await api('GET', `/v1/models/${agentId}:live`)).body.id).toBe(`${agentId}:live`);
    expect((await api('GET', `/v1/models/${agentId}:nope`)).status).toBe(404);
  });

  it('refuses to delete a version an alias routes to, naming the alias, and deletes it once none does', async () => {
    const refused = await api('DELETE', `/v1/agents/${agentId}/versions/1`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain('live');
    expect(refused.body.error.details.aliases).toEqual(['live']);
    expect((await api('DELETE', `/v1/agents/${agentId}/aliases/live`)).status).toBe(200);
    expect((await api('DELETE', `/v1/agents/${agentId}/aliases/live`)).status).toBe(404);
    expect((await api('DELETE', `/v1/agents/${agentId}/versions/1`)).body.data).toEqual({ agentId, version: 1, deleted: true });
    expect((await api('GET', `/v1/agents/${agentId}/versions/1`)).status).toBe(404);
    // Numbers are never reused.
    expect((await api('POST', `/v1/agents/${agentId}/versions`)).body.data.version).toBe(3);
  });

  it('refuses to publish a draft that no longer validates, naming the field', async () => {
    // An agent stored under older, looser rules: it still reads, but would not be accepted today.
    const loose = testRt.store.records.table('AGENT', z.custom<BaseRecord & Record<string, unknown>>(() => true));
    const id = 'agt_01kamold0000000000000000cc';
    await loose.create(t.scope, { id, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z', version: 1, name: 'Old', model: 'local/extractive', temperature: 3, maxTokens: 256, capabilities: ['chat'] });
    const res = await api('POST', `/v1/agents/${id}/versions`);
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe('temperature');
  });

  it('gives each of 12 publishes at once its own number, for agents, workflows and the platform API alike', async () => {
    const tenant = await provision(app, platformTestSecrets().adminToken, {});
    const agent = (await api('POST', '/v1/agents', { name: 'Burst', model: 'local/extractive' })).body.data.id as string;
    const workflow = (await api('POST', '/v1/workflows', { name: 'Burst', steps: [{ id: 'a', type: 'transform', expression: '1' }] })).body.data.id as string;
    const platformAgent = (await pcall(app, 'POST', '/platform/agent', tenant.accessToken, { body: { name: 'Burst', model: 'local/extractive' } })).body.data.id as string;
    const bursts = {
      agent: () => api('POST', `/v1/agents/${agent}/versions`),
      workflow: () => api('POST', `/v1/workflows/${workflow}/versions`),
      platform: () => pcall(app, 'POST', `/platform/agent/${platformAgent}/versions`, tenant.accessToken, { body: {} }),
    };
    for (const [what, publish] of Object.entries(bursts)) {
      const answers = await Promise.all(Array.from({ length: 12 }, () => publish()));
      expect(answers.map((a) => a.status), what).toEqual(Array(12).fill(201));
      expect(answers.map((a) => a.body.data.version as number).sort((a, b) => a - b), what).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    }
  }, 60_000);

  it('serves the same versions and aliases through the platform API', async () => {
    const tenant = await provision(app, platformTestSecrets().adminToken, {});
    const token = tenant.accessToken;
    const created = await pcall(app, 'POST', '/platform/agent', token, { body: { name: 'Platform', model: 'local/extractive' } });
    const id = created.body.data.id as string;
    const published = await pcall(app, 'POST', `/platform/agent/${id}/versions`, token, { body: { description: 'from the platform' } });
    expect(published.status).toBe(201);
    expect(published.body.data).toMatchObject({ agentId: id, version: 1, description: 'from the platform', agent: { name: 'Platform' } });
    expect((await pcall(app, 'PUT', `/platform/agent/${id}/aliases/live`, token, { body: { routing: [{ version: 1 }] } })).body.data.routing).toEqual([{ version: 1, weight: 100 }]);
    expect((await pcall(app, 'GET', `/platform/agent/${id}/versions`, token)).body.data.map((v: { version: number }) => v.version)).toEqual([1]);
    expect((await pcall(app, 'GET', `/platform/agent/${id}/aliases`, token)).body.data.map((a: { name: string }) => a.name)).toEqual(['live']);
    expect((await pcall(app, 'GET', `/platform/agent/${id}/versions/1/diff`, token)).body.data.changes).toEqual([]);
    expect((await pcall(app, 'DELETE', `/platform/agent/${id}/versions/1`, token)).status).toBe(409);
    expect((await pcall(app, 'GET', `/platform/agent/agt_01kaaaaaaaaaaaaaaaaaaaaaaa/versions`, token)).status).toBe(404);
    // Export and import there too: a new agent of the token's tenant with the same version and alias.
    const exported = (await pcall(app, 'GET', `/platform/agent/${id}/export`, token)).body.data;
    expect(exported).toMatchObject({ format: 'cairn.agent/v1', versions: [{ version: 1 }], aliases: [{ name: 'live' }] });
    const imported = await pcall(app, 'POST', '/platform/agent/import', token, { body: exported });
    expect(imported.status).toBe(201);
    expect(imported.body.data).toMatchObject({ versions: [1], aliases: ['live'] });
    expect((await pcall(app, 'GET', `/platform/agent/${imported.body.data.agent.id}/aliases/live`, token)).body.data.routing).toEqual([{ version: 1, weight: 100 }]);
  });

  it('keeps at most 500 versions, and deleting an agent deletes its versions and aliases', async () => {
    const many = (await api('POST', '/v1/agents', { name: 'Many', model: 'local/extractive' })).body.data.id as string;
    for (let i = 0; i < 500; i++) expect((await api('POST', `/v1/agents/${many}/versions`)).status).toBe(201);
    const over = await api('POST', `/v1/agents/${many}/versions`);
    expect(over.status).toBe(409);
    expect(over.body.error.message).toMatch(/delete old versions/);
    await api('PUT', `/v1/agents/${many}/aliases/live`, { routing: [{ version: 500 }] });
    expect((await api('DELETE', `/v1/agents/${many}`)).status).toBe(200);
    const releases = testRt.store.releases.of('AGENT', storedAgent);
    expect((await releases.listVersions(t.scope, many, { limit: 10 })).items).toEqual([]);
    expect(await releases.listAliases(t.scope, many)).toEqual([]);
  }, 120_000);
});
