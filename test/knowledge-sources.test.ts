import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { newTenant, type TestTenant } from './helpers/tenant';
import { testRt } from './helpers/runtime';

const app = createLocalApp(testRt);
const pgSource = {
  name: 'Orders DB',
  type: 'postgresql',
  config: { host: 'db.internal', port: 5432, database: 'shop', table: 'public.articles' },
};
const files = [
  { path: 'policies/returns.md', content: '# Returns\nItems can be returned within 30 days.' },
  { path: 'faq.txt', content: 'Shipping takes 3–5 days. Ünïcödé stays intact ✓' },
];

describe('knowledge sources', () => {
  let t: TestTenant;
  beforeAll(async () => {
    t = await newTenant();
  });

  it('creates a postgresql source with defaults and status created', async () => {
    const res = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: pgSource });
    expect(res.status).toBe(201);
    expect(res.body.data.id).toMatch(/^ks_/);
    expect(res.body.data).toMatchObject({ ...pgSource, status: 'created', description: '' });
    expect(res.body.data.config.ssl).toBe(false);
  });

  it.each([
    ['config.table', { table: 'orders; DROP TABLE x' }, 'must be a table name, optionally schema-qualified (schema.table)'],
    ['config.table', { table: 'a.b.c' }, undefined],
    ['config.port', { port: 70000 }, 'must be an integer between 1 and 65535'],
    ['config.port', { port: 0 }, 'must be an integer between 1 and 65535'],
    ['config.host', { host: '' }, undefined],
    ['config.textColumns[0]', { textColumns: ['body"; --'] }, undefined],
    ['config.password', { password: 'hunter2' }, undefined],
    ['config.colour', { colour: 'red' }, 'is not a known field'],
  ] as const)('rejects a bad %s', async (field, change, reason) => {
    const res = await call(app, 'POST', '/v1/knowledge-sources', {
      key: t.apiKey,
      body: { ...pgSource, config: { ...pgSource.config, ...change } },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe(field);
    if (reason) expect(res.body.error.details.reason).toBe(reason);
    // A credential never comes back, not even inside the error.
    expect(JSON.stringify(res.body)).not.toContain('hunter2');
  });

  it('names the type when it is missing or unknown', async () => {
    const res = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'x', type: 'mongo' } });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe('type');
  });

  it('stores a file collection and lists files without content unless asked', async () => {
    const created = await call(app, 'POST', '/v1/knowledge-sources', {
      key: t.apiKey,
      body: { name: 'Help centre', type: 'file-collection', files },
    });
    expect(created.status).toBe(201);
    expect(created.body.data.fileCount).toBe(2);
    const id = created.body.data.id;
    const got = await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey });
    expect(got.body.data.files.map((f: { path: string }) => f.path).sort()).toEqual(['faq.txt', 'policies/returns.md']);
    expect(got.body.data.files.every((f: { content?: string }) => f.content === undefined)).toBe(true);
    const returns = got.body.data.files.find((f: { path: string }) => f.path === 'policies/returns.md');
    expect(returns).toMatchObject({ contentType: 'text/markdown', size: Buffer.byteLength(files[0]!.content) });
    const withContent = await call(app, 'GET', `/v1/knowledge-sources/${id}?include=content`, { key: t.apiKey });
    const byPath = Object.fromEntries(withContent.body.data.files.map((f: { path: string; content: string }) => [f.path, f.content]));
    expect(byPath).toEqual(Object.fromEntries(files.map((f) => [f.path, f.content])));
  });

  it.each([
    ['files[0].path', [{ path: '/etc/passwd', content: 'x' }]],
    ['files[0].path', [{ path: 'a/../../b', content: 'x' }]],
    ['files[0].path', [{ path: 'a//b', content: 'x' }]],
    ['files[0].path', [{ path: 'a\\b', content: 'x' }]],
    ['files[1].path', [{ path: 'a.md', content: 'x' }, { path: 'a.md', content: 'y' }]],
    ['files[0].content', [{ path: 'a.md' }]],
  ])('rejects a bad %s', async (field, bad) => {
    const res = await call(app, 'POST', '/v1/knowledge-sources', {
      key: t.apiKey,
      body: { name: 'bad', type: 'file-collection', files: bad },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe(field);
  });

  it('accepts 5 MB of content in one request, split across items, and returns it intact', async () => {
    // Multi-byte characters make sure parts never split a character.
    const big = 'Größe ✓ '.repeat(Math.floor((5 * 1024 * 1024 - 1000) / Buffer.byteLength('Größe ✓ ')));
    expect(Buffer.byteLength(big)).toBeLessThanOrEqual(5 * 1024 * 1024);
    const res = await call(app, 'POST', '/v1/knowledge-sources', {
      key: t.apiKey,
      body: { name: 'big', type: 'file-collection', files: [{ path: 'big.txt', content: big }] },
    });
    expect(res.status).toBe(201);
    const got = await call(app, 'GET', `/v1/knowledge-sources/${res.body.data.id}?include=content`, { key: t.apiKey });
    expect(got.body.data.files[0].content).toBe(big);
  });

  it('answers 413 for more than 5 MB of content, and stores nothing', async () => {
    const own = await newTenant();
    const content = 'x'.repeat(5 * 1024 * 1024 + 1);
    const res = await call(app, 'POST', '/v1/knowledge-sources', {
      key: own.apiKey,
      body: { name: 'too big', type: 'file-collection', files: [{ path: 'a.txt', content }] },
    });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    const list = await call(app, 'GET', '/v1/knowledge-sources', { key: own.apiKey });
    expect(list.body.data).toEqual([]);
  });

  it('answers 413 for a body beyond the Lambda payload limit', async () => {
    const res = await call(app, 'POST', '/v1/knowledge-sources', {
      key: t.apiKey,
      rawBody: JSON.stringify({ name: 'x', type: 'file-collection', files: [{ path: 'a', content: 'y'.repeat(7 * 1024 * 1024) }] }),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('takes 12 uploads of distinct files at once, before and after the source is connected: each answers 2xx and every file counts', async () => {
    const id = (await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'burst', type: 'file-collection', files: [files[0]] } })).body.data.id as string;
    const burst = (round: string) =>
      Promise.all(Array.from({ length: 12 }, (_, i) => call(app, 'POST', `/v1/knowledge-sources/${id}/files`, { key: t.apiKey, body: { files: [{ path: `${round}/${i}.md`, content: `File ${i} of ${round}.` }] } })));
    const before = await burst('created');
    expect(before.map((r) => r.status)).toEqual(Array(12).fill(200));
    expect((await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey })).body.data.fileCount).toBe(13);
    expect((await call(app, 'POST', `/v1/knowledge-sources/${id}/connect`, { key: t.apiKey, body: {} })).status).toBe(202);
    const after = await burst('connected');
    expect(after.map((r) => r.status)).toEqual(Array(12).fill(200));
    expect((await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey })).body.data.fileCount).toBe(25);
  }, 60_000);

  it('adds, replaces and removes files by path', async () => {
    const id = (await call(app, 'POST', '/v1/knowledge-sources', {
      key: t.apiKey,
      body: { name: 'docs', type: 'file-collection', files },
    })).body.data.id;
    const added = await call(app, 'POST', `/v1/knowledge-sources/${id}/files`, {
      key: t.apiKey,
      body: { files: [{ path: 'faq.txt', content: 'Replaced.' }, { path: 'new.html', content: '<p>New</p>' }] },
    });
    expect(added.status).toBe(200);
    expect(added.body.data.fileCount).toBe(3);
    expect(added.body.data.version).toBe(2);
    const got = await call(app, 'GET', `/v1/knowledge-sources/${id}?include=content`, { key: t.apiKey });
    const byPath = Object.fromEntries(got.body.data.files.map((f: { path: string; content: string }) => [f.path, f.content]));
    expect(byPath['faq.txt']).toBe('Replaced.');
    expect(byPath['new.html']).toBe('<p>New</p>');

    const removed = await call(app, 'DELETE', `/v1/knowledge-sources/${id}/files?path=${encodeURIComponent('policies/returns.md')}`, { key: t.apiKey });
    expect(removed.status).toBe(200);
    expect(removed.body.data).toEqual({ id, path: 'policies/returns.md', deleted: true });
    const again = await call(app, 'DELETE', `/v1/knowledge-sources/${id}/files?path=policies/returns.md`, { key: t.apiKey });
    expect(again.status).toBe(404);
    const missingPath = await call(app, 'DELETE', `/v1/knowledge-sources/${id}/files`, { key: t.apiKey });
    expect(missingPath.status).toBe(400);
    expect(missingPath.body.error.details.field).toBe('path');
    const after = await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey });
    expect(after.body.data.files.map((f: { path: string }) => f.path).sort()).toEqual(['faq.txt', 'new.html']);
  });

  it('refuses files on a postgresql source', async () => {
    const id = (await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: pgSource })).body.data.id;
    const res = await call(app, 'POST', `/v1/knowledge-sources/${id}/files`, { key: t.apiKey, body: { files } });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe('type');
  });

  it('PUT replaces the whole file set and keeps the status', async () => {
    const id = (await call(app, 'POST', '/v1/knowledge-sources', {
      key: t.apiKey,
      body: { name: 'docs', type: 'file-collection', files },
    })).body.data.id;
    const put = await call(app, 'PUT', `/v1/knowledge-sources/${id}`, {
      key: t.apiKey,
      body: { name: 'docs v2', type: 'file-collection', status: 'ready', fileCount: 99, files: [{ path: 'only.md', content: 'Only' }] },
    });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ name: 'docs v2', status: 'created', fileCount: 1, version: 2 });
    expect(put.body.data.files.map((f: { path: string }) => f.path)).toEqual(['only.md']);
  });

  it('deleting a source removes it from the agents that listed it', async () => {
    const own = await newTenant();
    const ks = (await call(app, 'POST', '/v1/knowledge-sources', { key: own.apiKey, body: pgSource })).body.data.id;
    const keep = (await call(app, 'POST', '/v1/knowledge-sources', { key: own.apiKey, body: pgSource })).body.data.id;
    const agent = (await call(app, 'POST', '/v1/agents', {
      key: own.apiKey,
      body: { name: 'a', model: 'gpt-4', knowledgeSourceIds: [ks, keep] },
    })).body.data;
    const del = await call(app, 'DELETE', `/v1/knowledge-sources/${ks}`, { key: own.apiKey });
    expect(del.body.data).toEqual({ id: ks, deleted: true });
    const after = await call(app, 'GET', `/v1/agents/${agent.id}`, { key: own.apiKey });
    expect(after.body.data.knowledgeSourceIds).toEqual([keep]);
    expect(after.body.data.version).toBe(2);
    expect((await call(app, 'GET', `/v1/knowledge-sources/${ks}`, { key: own.apiKey })).status).toBe(404);
  });

  it("hides another tenant's source and its files", async () => {
    const id = (await call(app, 'POST', '/v1/knowledge-sources', {
      key: t.apiKey,
      body: { name: 'private', type: 'file-collection', files },
    })).body.data.id;
    const other = await newTenant();
    expect((await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: other.apiKey })).status).toBe(404);
    expect((await call(app, 'POST', `/v1/knowledge-sources/${id}/files`, { key: other.apiKey, body: { files } })).status).toBe(404);
    expect((await call(app, 'DELETE', `/v1/knowledge-sources/${id}/files?path=faq.txt`, { key: other.apiKey })).status).toBe(404);
    expect((await call(app, 'DELETE', `/v1/knowledge-sources/${id}`, { key: other.apiKey })).status).toBe(404);
    expect((await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey })).body.data.fileCount).toBe(2);
  });
});
