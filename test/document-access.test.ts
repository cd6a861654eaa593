import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { config } from '../shared/config';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { testPostgres } from './helpers/postgres';
import { indexTuning } from '../shared/search/index-tuning';
import { scopeOf } from '../shared/tenancy';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { pcall, provision, type ProvisionedTenant } from './helpers/platform';
import { testLocal, testPlatformSecrets, testRt } from './helpers/runtime';

/**
 * Document permissions, seen from outside: who may read each document (per file, changed later by
 * PUT …/access), the source's mode for documents without a list, and every way a document's text
 * could come back — search, grounding and its citations, MCP, traces — for readers with and
 * without access. The filter works inside the ranking: the top k is filled with readable chunks
 * even when many better-scoring ones are hidden.
 */
const app = createLocalApp(testRt);
const settle = () => testLocal.ingestion!.drain();
const SECRET = 'an-hs256-secret-for-the-document-access-tests!';
let t: ProvisionedTenant;
const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => call(app, method, path, { key: t.apiKey, headers, ...(body === undefined ? {} : { body }) });
const tokenFor = (sub: string, groups: string[] = []) =>
  new SignJWT({ groups }).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setIssuer('https://id.example.test/').setAudience('cairn').setExpirationTime('5m').sign(new TextEncoder().encode(SECRET));

async function readySource(body: Record<string, unknown>): Promise<string> {
  const created = await api('POST', '/v1/knowledge-sources', body);
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect((await api('POST', `/v1/knowledge-sources/${created.body.data.id}/connect`, {})).status).toBe(202);
  await settle();
  return created.body.data.id as string;
}
const search = (id: string, body: Record<string, unknown>, headers?: Record<string, string>) => api('POST', `/v1/knowledge-sources/${id}/search`, { topK: 10, ...body }, headers);
const paths = (res: { body: { data: { results: Array<{ path: string }> } } }) => res.body.data.results.map((r) => r.path).sort();

beforeAll(async () => {
  t = await provision(app, testPlatformSecrets.adminToken);
  expect((await pcall(app, 'PUT', '/platform/end-user-auth', t.accessToken, { body: { issuer: 'https://id.example.test/', audience: 'cairn', hs256Secret: SECRET } })).status).toBe(200);
});

describe('document permissions: an open source', () => {
  let id: string;
  beforeAll(async () => {
    id = await readySource({
      name: 'Handbook',
      type: 'file-collection',
      files: [
        { path: 'holidays.md', content: '# Holidays\nEvery employee has 25 days of paid holiday a year.' },
        { path: 'salaries.md', content: '# Salaries\nThe salary bands for 2026: engineers earn between 60k and 90k. Holiday pay is included.', access: { groups: ['finance'] } },
        { path: 'ana-review.md', content: '# Review of Ana\nAna’s holiday carry-over was approved: 5 days.', access: { users: ['u-ana'] } },
      ],
    });
  });

  it('shows each file’s list and document id, and the source’s mode', async () => {
    const got = await api('GET', `/v1/knowledge-sources/${id}`);
    expect(got.body.data.access).toBe('open');
    const salaries = got.body.data.files.find((f: { path: string }) => f.path === 'salaries.md');
    expect(salaries).toMatchObject({ access: { users: [], groups: ['finance'] }, documentId: expect.stringMatching(/^doc_[0-9a-f]{26}$/) });
  });

  it('returns to each reader only what they may read: nobody, a user on the caller’s word, a verified group member', async () => {
    expect(paths(await search(id, { query: 'holiday days' }))).toEqual(['holidays.md']);
    expect(paths(await search(id, { query: 'holiday days', context: { userId: 'u-ana' } }))).toEqual(['ana-review.md', 'holidays.md']);
    expect(paths(await search(id, { query: 'holiday days', context: { userId: 'u-cy', groups: ['finance'] } }))).toEqual(['holidays.md', 'salaries.md']);
    expect(paths(await search(id, { query: 'holiday days' }, { 'x-end-user-token': await tokenFor('u-dee', ['finance']) }))).toEqual(['holidays.md', 'salaries.md']);
    // A token's groups are the user's: context.groups cannot add to them.
    expect(paths(await search(id, { query: 'salary bands' }, { 'x-end-user-token': await tokenFor('u-eve', ['sales']) }))).toEqual([]);
  });

  it('changes a document’s readers for the next search without indexing it again, and removes its list with null', async () => {
    const before = (await api('GET', `/v1/knowledge-sources/${id}`)).body.data;
    const documentId = before.files.find((f: { path: string }) => f.path === 'salaries.md').documentId;
    const set = await api('PUT', `/v1/knowledge-sources/${id}/documents/${documentId}/access`, { access: { users: ['u-bob'] } });
    expect(set.status).toBe(200);
    expect(set.body.data).toEqual({ documentId, path: 'salaries.md', access: { users: ['u-bob'], groups: [] } });
    expect(paths(await search(id, { query: 'salary bands', context: { userId: 'u-cy', groups: ['finance'] } }))).not.toContain('salaries.md');
    expect(paths(await search(id, { query: 'salary bands', context: { userId: 'u-bob' } }))).toContain('salaries.md');
    const after = (await api('GET', `/v1/knowledge-sources/${id}`)).body.data;
    expect(after.status).toBe('ready');
    expect(after.stats.lastSyncedAt).toBe(before.stats.lastSyncedAt); // no sync ran
    expect(after.files.find((f: { path: string }) => f.path === 'salaries.md').access).toEqual({ users: ['u-bob'], groups: [] });
    // A later sync keeps the list the file now has.
    expect((await api('POST', `/v1/knowledge-sources/${id}/connect`, {})).status).toBe(202);
    await settle();
    expect(paths(await search(id, { query: 'salary bands', context: { userId: 'u-bob' } }))).toContain('salaries.md');
    expect(paths(await search(id, { query: 'salary bands', context: { userId: 'u-cy', groups: ['finance'] } }))).not.toContain('salaries.md');
    // Groups as identity providers name them, paths included.
    expect((await api('PUT', `/v1/knowledge-sources/${id}/documents/${documentId}/access`, { access: { groups: ['/org/finance'] } })).status).toBe(200);
    expect(paths(await search(id, { query: 'salary bands', context: { userId: 'u-cy', groups: ['/org/finance'] } }))).toContain('salaries.md');
    expect(paths(await search(id, { query: 'salary bands', context: { userId: 'u-cy', groups: ['finance'] } }))).not.toContain('salaries.md');
    // null: no list, so the open source lets everyone read it.
    expect((await api('PUT', `/v1/knowledge-sources/${id}/documents/${documentId}/access`, { access: null })).body.data.access).toBeNull();
    expect(paths(await search(id, { query: 'salary bands' }))).toContain('salaries.md');
  });

  it('takes a list with an upload, and a new list for the same bytes as a change', async () => {
    const text = '# Bonus scheme\nThe bonus scheme pays out in March.';
    const upload = async (access: unknown) => {
      const ticket = await api('POST', `/v1/knowledge-sources/${id}/uploads`, { path: 'bonus.md', size: Buffer.byteLength(text), access });
      expect(ticket.status).toBe(201);
      const { uploadId, url, headers } = ticket.body.data;
      expect((await fetch(url, { method: 'PUT', headers, body: text })).status).toBe(200);
      expect((await api('POST', `/v1/knowledge-sources/${id}/uploads/${uploadId}/complete`)).status).toBe(200);
      await settle();
    };
    await upload({ groups: ['hr'] });
    expect(paths(await search(id, { query: 'bonus scheme' }))).not.toContain('bonus.md');
    expect(paths(await search(id, { query: 'bonus scheme', context: { userId: 'u-h', groups: ['hr'] } }))).toContain('bonus.md');
    await upload({ users: ['u-z'] });
    expect(paths(await search(id, { query: 'bonus scheme', context: { userId: 'u-h', groups: ['hr'] } }))).not.toContain('bonus.md');
    expect(paths(await search(id, { query: 'bonus scheme', context: { userId: 'u-z' } }))).toContain('bonus.md');
  });

  it('refuses an unknown document and a malformed id', async () => {
    expect((await api('PUT', `/v1/knowledge-sources/${id}/documents/doc_${'0'.repeat(26)}/access`, { access: null })).status).toBe(404);
    expect((await api('PUT', `/v1/knowledge-sources/${id}/documents/nope/access`, { access: null })).status).toBe(404);
    const badUser = await api('PUT', `/v1/knowledge-sources/${id}/documents/doc_${'0'.repeat(26)}/access`, { access: { users: ['has space'] } });
    expect(badUser.status).toBe(400);
  });
});

describe('document permissions: a restricted source', () => {
  let id: string;
  const hidden = Array.from({ length: 30 }, (_, i) => ({
    path: `board/minutes-${i}.md`,
    content: `# Board minutes ${i}\nThe merger with Northwind was discussed: merger terms, merger price, merger timing. Merger merger merger.`,
    access: { groups: ['board'] },
  }));
  beforeAll(async () => {
    id = await readySource({
      name: 'Company',
      type: 'file-collection',
      access: 'restricted',
      files: [
        ...hidden,
        { path: 'news/merger-faq.md', content: '# Merger FAQ\nA merger was announced; details follow.', access: { groups: ['staff'] } },
        { path: 'news/press.md', content: '# Press release\nWe announce a merger with Northwind.', access: { groups: ['staff'] } },
        { path: 'news/unlisted.md', content: '# Draft\nThe merger draft has no list yet.' },
      ],
    });
  });

  it('ranks inside the filter: the top k is filled with readable chunks although 30 hidden ones score higher', async () => {
    const staff = await search(id, { query: 'merger', topK: 2, context: { userId: 'u-sam', groups: ['staff'] } });
    expect(paths(staff)).toEqual(['news/merger-faq.md', 'news/press.md']);
    const board = await search(id, { query: 'merger', topK: 2, context: { userId: 'u-ceo', groups: ['board'] } });
    expect(paths(board).every((p) => p.startsWith('board/'))).toBe(true);
    expect(paths(board)).toHaveLength(2);
  });

  it('lets nobody read a document without a list, and nobody without an end user read anything', async () => {
    expect(paths(await search(id, { query: 'merger draft', context: { userId: 'u-sam', groups: ['staff', 'board'] } }))).not.toContain('news/unlisted.md');
    const anonymous = await search(id, { query: 'merger' });
    expect(anonymous.body.data.results).toEqual([]);
    expect(JSON.stringify(anonymous.body)).not.toContain('Northwind');
  });

  it('keeps every list through a compaction', async () => {
    const saved = { ...indexTuning };
    Object.assign(indexTuning, { compactionGraceSeconds: 0 });
    onTestFinished(() => void Object.assign(indexTuning, saved));
    // Two more syncs make more segments; then everything is merged.
    for (const n of [1, 2]) {
      expect((await api('POST', `/v1/knowledge-sources/${id}/files`, { files: [{ path: `news/extra-${n}.md`, content: `# Extra ${n}\nAnother merger note.`, access: { groups: ['staff'] } }] })).status).toBeLessThan(300);
      await settle();
    }
    const before = (await testRt.store.searchIndex.readSegments(scopeOf(t.tenantId), id)).filter((s) => s.state === 'live');
    expect(before.length).toBe(3);
    expect((await api('POST', `/v1/knowledge-sources/${id}/compact`)).status).toBe(202);
    await settle();
    expect((await testRt.store.searchIndex.readSegments(scopeOf(t.tenantId), id)).filter((s) => s.state === 'live')).toHaveLength(1);
    const staff = await search(id, { query: 'merger', context: { userId: 'u-sam', groups: ['staff'] } });
    expect(paths(staff)).toEqual(['news/extra-1.md', 'news/extra-2.md', 'news/merger-faq.md', 'news/press.md']);
    expect((await search(id, { query: 'merger' })).body.data.results).toEqual([]);
    const board = await search(id, { query: 'merger', topK: 40, context: { userId: 'u-ceo', groups: ['board'] } });
    expect(paths(board)).toEqual(hidden.map((h) => h.path).sort());
  });
});

describe('document permissions: what agents, MCP and traces give back', () => {
  let agentId: string;
  beforeAll(async () => {
    const id = await readySource({
      name: 'Policies',
      type: 'file-collection',
      files: [
        { path: 'travel.md', content: '# Travel policy\nTrain travel is booked in second class.' },
        { path: 'travel-execs.md', content: '# Executive travel\nExecutives travel in first class with the code PLATINUM-7731.', access: { groups: ['execs'] } },
      ],
    });
    agentId = (await api('POST', '/v1/agents', { name: 'Policy bot', model: 'local/extractive', capabilities: ['chat', 'document-search'], knowledgeSourceIds: [id] })).body.data.id;
  });

  it('grounds, cites and traces only what the asker may read', async () => {
    const question = { message: 'Which class do executives travel in for train travel?' };
    const nobody = await api('POST', `/v1/agents/${agentId}/converse`, question);
    expect(nobody.status).toBe(200);
    expect(JSON.stringify(nobody.body)).not.toContain('PLATINUM');
    expect(nobody.body.data.sources.map((s: { path: string }) => s.path)).not.toContain('travel-execs.md');
    const trace = await api('GET', `/v1/traces/${nobody.headers.get('x-request-id')}`);
    expect(trace.status).toBe(200);
    expect(JSON.stringify(trace.body)).not.toContain('PLATINUM');
    expect(JSON.stringify(trace.body)).not.toContain('travel-execs');

    const exec = await api('POST', `/v1/agents/${agentId}/converse`, question, { 'x-end-user-token': await tokenFor('u-exec', ['execs']) });
    expect(exec.body.data.sources.map((s: { path: string }) => s.path)).toContain('travel-execs.md');
    expect(exec.body.data.reply).toContain('first class');
  });

  it('runs evaluation cases as the end user each names, and for nobody without one', async () => {
    const question = 'Which class do executives travel in for train travel?';
    const dataset = await api('POST', '/v1/eval-datasets', { name: 'Travel', cases: [{ input: question }, { input: question, context: { userId: 'u-exec', groups: ['execs'] } }] });
    expect(dataset.status, JSON.stringify(dataset.body)).toBe(201);
    const datasetId = dataset.body.data.id;
    expect((await api('GET', `/v1/eval-datasets/${datasetId}/cases`)).body.data[1].context).toEqual({ userId: 'u-exec', groups: ['execs'] });
    const started = await api('POST', '/v1/eval-runs', { datasetId, target: { agentId }, scorers: ['contains'] });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    let run = started.body.data;
    for (let i = 0; i < 50 && run.status !== 'completed'; i++) {
      await testLocal.workflowSteps!.drain();
      run = (await api('GET', `/v1/eval-runs/${run.id}`)).body.data;
    }
    expect(run.status).toBe('completed');
    const [nobody, exec] = (await api('GET', `/v1/eval-runs/${run.id}/results?limit=10`)).body.data;
    expect(JSON.stringify(nobody)).not.toContain('PLATINUM');
    expect(JSON.stringify(nobody)).not.toContain('travel-execs');
    expect(exec.output).toContain('first class with the code PLATINUM');
    expect((await api('POST', '/v1/eval-datasets', { name: 'Bad', cases: [{ input: 'q', context: { userId: 'a/b' } }] })).body.error.details.field).toBe('cases[0].context.userId');
  });

  it('answers MCP’s search_knowledge for the token’s user only', async () => {
    const sources = (await api('GET', '/v1/knowledge-sources')).body.data;
    const id = sources.find((s: { name: string }) => s.name === 'Policies').id;
    const ask = (headers: Record<string, string>) =>
      api('POST', '/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_knowledge', arguments: { knowledgeSourceId: id, query: 'executive travel class' } } }, { accept: 'application/json, text/event-stream', ...headers });
    expect(JSON.stringify((await ask({})).body)).not.toContain('PLATINUM');
    expect(JSON.stringify((await ask({ 'x-end-user-token': await tokenFor('u-exec', ['execs']) })).body)).toContain('PLATINUM');
  });
});

describe('document permissions: a PostgreSQL column', () => {
  const { target, admin: owner } = testPostgres();
  const admin = (text: string, values: unknown[] = []) => owner.query(text, values);
  const table = `tickets_${randomBytes(4).toString('hex')}`;
  let id: string;
  beforeAll(async () => {
    await admin(`CREATE TABLE ${table} (id text PRIMARY KEY, body text NOT NULL, readers text[])`);
    await admin(`INSERT INTO ${table} VALUES ($1, $2, $3), ($4, $5, $6), ($7, $8, NULL)`, [
      't1', 'Ticket about the broken espresso machine in Lyon.', ['user:u-ana', 'group:support'],
      't2', 'Ticket about the espresso machine invoice dispute.', ['group:billing', 'bogus-entry'],
      't3', 'Public notice: the espresso machine is being repaired.',
    ]);
    const created = await api('POST', '/v1/knowledge-sources', { name: 'Tickets', type: 'postgresql', config: { host: 'localhost', port: target.port, database: target.database, table: `public.${table}`, accessColumn: 'readers' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    id = created.body.data.id;
    expect((await api('POST', `/v1/knowledge-sources/${id}/connect`, { credentials: { username: target.username, password: target.password } })).status).toBe(202);
    await settle();
  });
  const rowKeys = (res: { body: { data: { results: Array<{ rowKey: string }> } } }) => res.body.data.results.map((r) => r.rowKey).sort();

  it('reads each row’s readers from the column, and follows a change there at the next sync', async () => {
    expect(rowKeys(await search(id, { query: 'espresso machine' }))).toEqual(['t3']);
    expect(rowKeys(await search(id, { query: 'espresso machine', context: { userId: 'u-ana' } }))).toEqual(['t1', 't3']);
    expect(rowKeys(await search(id, { query: 'espresso machine', context: { userId: 'u-x', groups: ['billing'] } }))).toEqual(['t2', 't3']);
    await admin(`UPDATE ${table} SET readers = $1 WHERE id = 't2'`, [['group:support']]);
    expect((await api('POST', `/v1/knowledge-sources/${id}/connect`, { credentials: { username: target.username, password: target.password } })).status).toBe(202);
    await settle();
    expect(rowKeys(await search(id, { query: 'espresso machine', context: { userId: 'u-x', groups: ['billing'] } }))).toEqual(['t3']);
    expect(rowKeys(await search(id, { query: 'espresso machine', context: { userId: 'u-y', groups: ['support'] } }))).toEqual(['t1', 't2', 't3']);
  });
});

describe('document permissions: S3 object metadata', () => {
  const s3 = new S3Client({ endpoint: config.s3Endpoint, forcePathStyle: true, region: 'us-east-1', credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
  const prefix = `acl-${randomBytes(4).toString('hex')}/`;
  const put = (key: string, body: string, access?: string) =>
    s3.send(new PutObjectCommand({ Bucket: 'cairn-test-documents', Key: `${prefix}${key}`, Body: body, ContentType: 'text/markdown', ...(access ? { Metadata: { 'cairn-access': access } } : {}) }));
  let id: string;
  beforeAll(async () => {
    await put('plans.md', '# Plans\nThe roadmap for the harbour project.', 'group:planning, user:u-ana');
    await put('notice.md', '# Notice\nThe harbour project opens to visitors in May.');
    id = await readySource({ name: 'Bucket', type: 's3', config: { bucket: 'cairn-test-documents', prefix } });
  });

  it('reads who may read each object from x-amz-meta-cairn-access, and follows new metadata at the next sync', async () => {
    expect(paths(await search(id, { query: 'harbour project' }))).toEqual([`${prefix}notice.md`]);
    expect(paths(await search(id, { query: 'harbour project', context: { userId: 'u-ana' } }))).toEqual([`${prefix}notice.md`, `${prefix}plans.md`]);
    // The same bytes with other metadata (S3 keeps the ETag, the time it was written changes, to the second): the next sync takes the new list.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await put('plans.md', '# Plans\nThe roadmap for the harbour project.', 'group:board');
    expect((await api('POST', `/v1/knowledge-sources/${id}/connect`, {})).status).toBe(202);
    await settle();
    expect(paths(await search(id, { query: 'harbour project', context: { userId: 'u-ana' } }))).toEqual([`${prefix}notice.md`]);
    expect(paths(await search(id, { query: 'harbour project', context: { userId: 'u-b', groups: ['board'] } }))).toEqual([`${prefix}notice.md`, `${prefix}plans.md`]);
  });
});
