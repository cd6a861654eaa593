import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { newTenant, type TestTenant } from './helpers/tenant';
import { testRt } from './helpers/runtime';

const app = createLocalApp(testRt);
const seedAgent = {
  name: 'Support bot',
  description: 'Answers questions',
  model: 'gpt-4',
  temperature: 0.3,
  maxTokens: 512,
  capabilities: ['chat', 'document-search'],
};

describe('agents', () => {
  let t: TestTenant;
  beforeAll(async () => {
    t = await newTenant();
  });

  it('creates the seed agent with an agt_ id, defaults and the envelope', async () => {
    const res = await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: seedAgent });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ ...seedAgent, knowledgeSourceIds: [], version: 1 });
    expect(res.body.data.id).toMatch(/^agt_[0-9a-z]{26}$/);
    expect(res.body.data.createdAt).toBe(res.body.data.updatedAt);
    expect(res.body.meta.requestId).toBe(res.headers.get('x-request-id'));
    expect(new Date(res.body.meta.timestamp).toISOString()).toBe(res.body.meta.timestamp);
    expect(res.headers.get('location')).toBe(`/v1/agents/${res.body.data.id}`);
  });

  it('applies defaults where the request is silent', async () => {
    const res = await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Min', model: 'local/extractive' } });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ temperature: 0.7, maxTokens: 1024, capabilities: ['chat'], description: '' });
  });

  it.each([
    ['name', { ...seedAgent, name: '' }, 'must not be empty'],
    ['name', { ...seedAgent, name: 'x'.repeat(201) }, 'must have at most 200 characters'],
    ['model', { ...seedAgent, model: undefined }, 'is required'],
    ['model', { ...seedAgent, model: 'nosuch/model' }, undefined],
    ['temperature', { ...seedAgent, temperature: 2.5 }, 'must be between 0 and 2'],
    ['temperature', { ...seedAgent, temperature: '0.3' }, 'must be a number'],
    ['maxTokens', { ...seedAgent, maxTokens: 1.5 }, 'must be an integer between 1 and 200000'],
    ['maxTokens', { ...seedAgent, maxTokens: 200_001 }, 'must be an integer between 1 and 200000'],
    ['capabilities[1]', { ...seedAgent, capabilities: ['chat', 'fly'] }, 'must be one of: chat, document-search'],
    ['capabilities[1]', { ...seedAgent, capabilities: ['chat', 'chat'] }, 'repeats the capability at index 0'],
    ['description', { ...seedAgent, description: 'd'.repeat(4001) }, 'must have at most 4000 characters'],
    ['instructions', { ...seedAgent, instructions: 'i'.repeat(20_001) }, 'must have at most 20000 characters'],
    ['knowledgeSourceIds[0]', { ...seedAgent, knowledgeSourceIds: ['nope'] }, 'must be a knowledge source id (ks_…)'],
    ['colour', { ...seedAgent, colour: 'blue' }, 'is not a known field'],
  ] as const)('rejects a bad %s, naming it', async (field, body, reason) => {
    const res = await call(app, 'POST', '/v1/agents', { key: t.apiKey, body });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('INVALID_REQUEST');
    expect(res.body.error.details.field).toBe(field);
    if (reason) expect(res.body.error.details.reason).toBe(reason);
    expect(res.body.meta.requestId).toBeTruthy();
  });

  it('requires referenced knowledge sources to exist in the tenant', async () => {
    const other = await newTenant();
    const ks = await call(app, 'POST', '/v1/knowledge-sources', {
      key: other.apiKey,
      body: { name: 'theirs', type: 'file-collection', files: [] },
    });
    const res = await call(app, 'POST', '/v1/agents', {
      key: t.apiKey,
      body: { ...seedAgent, knowledgeSourceIds: [ks.body.data.id] },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe('knowledgeSourceIds[0]');
    const mine = await call(app, 'POST', '/v1/knowledge-sources', {
      key: t.apiKey,
      body: { name: 'mine', type: 'file-collection' },
    });
    const ok = await call(app, 'POST', '/v1/agents', {
      key: t.apiKey,
      body: { ...seedAgent, knowledgeSourceIds: [mine.body.data.id] },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.data.knowledgeSourceIds).toEqual([mine.body.data.id]);
  });

  it('gets, replaces and deletes; PUT ignores read-only fields and bumps the version', async () => {
    const created = (await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: seedAgent })).body.data;
    const got = await call(app, 'GET', `/v1/agents/${created.id}`, { key: t.apiKey });
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual(created);

    const put = await call(app, 'PUT', `/v1/agents/${created.id}`, {
      key: t.apiKey,
      body: { ...created, name: 'Renamed', id: 'agt_other', createdAt: 'yesterday', status: 'x', temperature: 1 },
    });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ id: created.id, name: 'Renamed', temperature: 1, createdAt: created.createdAt, version: 2 });
    expect(put.body.data.updatedAt >= created.updatedAt).toBe(true);

    // PUT replaces: what the body leaves out returns to its default.
    const bare = await call(app, 'PUT', `/v1/agents/${created.id}`, { key: t.apiKey, body: { name: 'Bare', model: 'gpt-4' } });
    expect(bare.body.data).toMatchObject({ description: '', temperature: 0.7, maxTokens: 1024, capabilities: ['chat'] });

    const badPut = await call(app, 'PUT', `/v1/agents/${created.id}`, { key: t.apiKey, body: { ...seedAgent, extra: 1 } });
    expect(badPut.status).toBe(400);
    expect(badPut.body.error.details.field).toBe('extra');

    const del = await call(app, 'DELETE', `/v1/agents/${created.id}`, { key: t.apiKey });
    expect(del.status).toBe(200);
    expect(del.body.data).toEqual({ id: created.id, deleted: true });
    expect((await call(app, 'GET', `/v1/agents/${created.id}`, { key: t.apiKey })).status).toBe(404);
    expect((await call(app, 'DELETE', `/v1/agents/${created.id}`, { key: t.apiKey })).status).toBe(404);
    expect((await call(app, 'PUT', `/v1/agents/${created.id}`, { key: t.apiKey, body: seedAgent })).status).toBe(404);
  });

  it("answers 404 for another tenant's agent, whatever the method", async () => {
    const created = (await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: seedAgent })).body.data;
    const other = await newTenant();
    for (const [method, body] of [['GET'], ['PUT', seedAgent], ['DELETE']] as const) {
      const res = await call(app, method, `/v1/agents/${created.id}`, { key: other.apiKey, body });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    expect((await call(app, 'GET', `/v1/agents/${created.id}`, { key: t.apiKey })).status).toBe(200);
  });

  it('paginates newest first with opaque cursors and an exact hasMore', async () => {
    const own = await newTenant();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await call(app, 'POST', '/v1/agents', { key: own.apiKey, body: { name: `a${i}`, model: 'gpt-4' } })).body.data.id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    const pages: boolean[] = [];
    do {
      const res: Awaited<ReturnType<typeof call>> = await call(app, 'GET', `/v1/agents?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { key: own.apiKey });
      expect(res.status).toBe(200);
      expect(res.body.meta.pagination.limit).toBe(2);
      seen.push(...res.body.data.map((a: { id: string }) => a.id));
      pages.push(res.body.meta.pagination.hasMore);
      cursor = res.body.meta.pagination.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
    expect(pages).toEqual([true, true, false]);
  });

  it('rejects bad pagination parameters', async () => {
    for (const [query, field] of [['limit=0', 'limit'], ['limit=101', 'limit'], ['limit=abc', 'limit'], ['cursor=%%%', 'cursor']]) {
      const res = await call(app, 'GET', `/v1/agents?${query}`, { key: t.apiKey });
      expect(res.status, query).toBe(400);
      expect(res.body.error.details.field).toBe(field);
    }
  });

  it('replays a create retried with the same Idempotency-Key instead of creating twice', async () => {
    const own = await newTenant();
    const headers = { 'idempotency-key': 'order-42' };
    const first = await call(app, 'POST', '/v1/agents', { key: own.apiKey, body: seedAgent, headers });
    const again = await call(app, 'POST', '/v1/agents', { key: own.apiKey, body: seedAgent, headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body.data.id).toBe(first.body.data.id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const list = await call(app, 'GET', '/v1/agents', { key: own.apiKey });
    expect(list.body.data).toHaveLength(1);
    const different = await call(app, 'POST', '/v1/agents', { key: own.apiKey, body: { ...seedAgent, name: 'Other' }, headers });
    expect(different.status).toBe(409);
    expect(different.body.error.details.field).toBe('Idempotency-Key');
  });

  it('replays the first answer even after the created agent was deleted', async () => {
    const own = await newTenant();
    const headers = { 'idempotency-key': 'order-43' };
    const first = await call(app, 'POST', '/v1/agents', { key: own.apiKey, body: seedAgent, headers });
    expect((await call(app, 'DELETE', `/v1/agents/${first.body.data.id}`, { key: own.apiKey })).status).toBe(200);
    const again = await call(app, 'POST', '/v1/agents', { key: own.apiKey, body: seedAgent, headers });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data).toEqual(first.body.data);
  });
});
