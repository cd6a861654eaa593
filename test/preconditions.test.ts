import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { pcall, platformTestSecrets, provision, type ProvisionedTenant } from './helpers/platform';
import { testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/**
 * Optimistic concurrency: a GET's ETag is the record's version; PUT and DELETE with an If-Match
 * that no longer matches are a 412 PRECONDITION_FAILED and change nothing; without If-Match they
 * behave as before. Two console tabs editing one agent cannot silently overwrite each other.
 */
const app = createLocalApp(testRt);

const resources = [
  { path: '/v1/agents', body: (name: string) => ({ name, model: 'local/extractive' }) },
  { path: '/v1/workflows', body: (name: string) => ({ name, steps: [{ id: 'a', type: 'transform', expression: '1' }] }) },
  { path: '/v1/knowledge-sources', body: (name: string) => ({ name, type: 'file-collection', files: [{ path: 'a.md', content: '# A' }] }) },
];

describe('If-Match and ETag', () => {
  let t: TestTenant;
  beforeAll(async () => {
    t = await newTenant();
  });
  const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => call(app, method, path, { key: t.apiKey, headers, ...(body === undefined ? {} : { body }) });

  it.each(resources)('$path: two tabs read one record; the second write with the stale ETag is a 412 and changes nothing', async ({ path, body }) => {
    const created = await api('POST', path, body('first'));
    expect(created.headers.get('etag')).toBe('"1"');
    const id = created.body.data.id as string;
    const tabA = await api('GET', `${path}/${id}`);
    const tabB = await api('GET', `${path}/${id}`);
    expect(tabA.headers.get('etag')).toBe('"1"');
    const saved = await api('PUT', `${path}/${id}`, body('from tab A'), { 'if-match': tabA.headers.get('etag')! });
    expect(saved.status).toBe(200);
    expect(saved.headers.get('etag')).toBe('"2"');
    const stale = await api('PUT', `${path}/${id}`, body('from tab B'), { 'if-match': tabB.headers.get('etag')! });
    expect(stale.status).toBe(412);
    expect(stale.body.error).toMatchObject({ code: 'PRECONDITION_FAILED', details: { currentVersion: 2, etag: '"2"' } });
    expect((await api('GET', `${path}/${id}`)).body.data.name).toBe('from tab A');
    // A weak tag and a list compare by version too; `*` only asks that it exists.
    expect((await api('PUT', `${path}/${id}`, body('weak'), { 'if-match': 'W/"9", W/"2"' })).status).toBe(200);
    expect((await api('PUT', `${path}/${id}`, body('any'), { 'if-match': '*' })).status).toBe(200);
    const malformed = await api('PUT', `${path}/${id}`, body('bad'), { 'if-match': 'version-4' });
    expect(malformed.status).toBe(412);
    expect(malformed.body.error.details.field).toBe('If-Match');
    // Without If-Match: as before.
    expect((await api('PUT', `${path}/${id}`, body('plain'))).status).toBe(200);
    const current = (await api('GET', `${path}/${id}`)).headers.get('etag')!;
    expect(current).toBe('"5"');
    expect((await api('DELETE', `${path}/${id}`, undefined, { 'if-match': '"4"' })).status).toBe(412);
    expect((await api('GET', `${path}/${id}`)).status).toBe(200);
    expect((await api('DELETE', `${path}/${id}`, undefined, { 'if-match': current })).status).toBe(200);
    expect((await api('DELETE', `${path}/${id}`, undefined, { 'if-match': current })).status).toBe(404);
  });

  it('lets exactly one of two concurrent writes with the same ETag through', async () => {
    const created = await api('POST', '/v1/agents', { name: 'race', model: 'local/extractive' });
    const id = created.body.data.id as string;
    const writes = await Promise.all(['x', 'y', 'z'].map((name) => api('PUT', `/v1/agents/${id}`, { name, model: 'local/extractive' }, { 'if-match': '"1"' })));
    expect(writes.map((w) => w.status).sort()).toEqual([200, 412, 412]);
  });

  it('holds the platform API’s PATCH and DELETE of an agent to If-Match the same way', async () => {
    const tenant: ProvisionedTenant = await provision(app, platformTestSecrets().adminToken, {});
    const token = tenant.accessToken;
    const created = await pcall(app, 'POST', '/platform/agent', token, { body: { name: 'p', model: 'local/extractive' } });
    const id = created.body.data.id as string;
    const read = await pcall(app, 'GET', `/platform/agent/${id}`, token);
    expect(read.headers.get('etag')).toBe('"1"');
    expect((await pcall(app, 'PATCH', `/platform/agent/${id}`, token, { body: { temperature: 0.1 }, headers: { 'if-match': '"1"' } })).status).toBe(200);
    const stale = await pcall(app, 'PATCH', `/platform/agent/${id}`, token, { body: { temperature: 0.9 }, headers: { 'if-match': '"1"' } });
    expect(stale.status).toBe(412);
    expect(stale.body.error.code).toBe('PRECONDITION_FAILED');
    expect((await pcall(app, 'DELETE', `/platform/agent/${id}`, token, { headers: { 'if-match': '"1"' } })).status).toBe(412);
    expect((await pcall(app, 'DELETE', `/platform/agent/${id}`, token, { headers: { 'if-match': '"2"' } })).status).toBe(200);
  });
});
