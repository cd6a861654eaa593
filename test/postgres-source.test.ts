import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { connect, readOnly, rowToDocument } from '../shared/knowledge/connectors/postgres';
import { call } from './helpers/http';
import { newTenant, type TestTenant } from './helpers/tenant';
import { testRt, testLocal } from './helpers/runtime';
import { testPostgres } from './helpers/postgres';

const app = createLocalApp(testRt);
const settle = () => testLocal.ingestion!.drain();
const { target, admin } = testPostgres();
const table = `articles_${randomBytes(4).toString('hex')}`;
const credentials = { username: target.username, password: target.password };
// Sources name the server as tests name every local service: localhost, the one host the tests'
// deployment allows (TOOL_ALLOWED_HOSTS); its address itself is refused like any private one.
const config = {
  host: 'localhost',
  port: target.port,
  database: target.database,
  table: `public.${table}`,
  metadataColumns: ['price', 'published', 'tags'],
  updatedAtColumn: 'updated_at',
};

const rows = [
  ['Returns policy', 'Items can be returned within 30 days of delivery.', '19.90', '2024-01-15', { section: 'help' }],
  ['Express shipping', 'Express parcels arrive the next working day.', '7.50', '2024-02-01', { section: 'shipping' }],
  ['Überweisung und Zahlung', 'Zahlung per Überweisung ist möglich — Ünïcödé bleibt erhalten.', null, null, null],
  ["Robert'); DROP TABLE students;--", 'A row whose text looks like SQL is just text.', '0', '2024-03-01', { tricky: "'; --" }],
  ['Long article', `${'Bicycle maintenance explained step by step. '.repeat(400)}The chain needs oil every month.`, '1', '2024-04-01', []],
  [null, 'A row without a title still becomes a document.', '2', '2024-05-01', { n: 1 }],
];

async function connectSource(t: TestTenant, body: unknown, connectBody: unknown = { credentials }) {
  const created = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body });
  expect(created.status).toBe(201);
  const connected = await call(app, 'POST', `/v1/knowledge-sources/${created.body.data.id}/connect`, { key: t.apiKey, body: connectBody });
  return { id: created.body.data.id as string, connected };
}

describe(`PostgreSQL sources (${target.kind})`, () => {
  let t: TestTenant;
  let id: string;
  let silent: Server;
  let canaryConnections = 0;

  beforeAll(async () => {
    await admin.query(`CREATE TABLE ${table} (id serial PRIMARY KEY, title text, body text, price numeric, published date, tags jsonb, updated_at timestamptz NOT NULL DEFAULT now())`);
    for (const [title, body, price, published, tags] of rows) {
      await admin.query(`INSERT INTO ${table} (title, body, price, published, tags) VALUES ($1, $2, $3, $4, $5)`, [title, body, price, published, tags === null ? null : JSON.stringify(tags)]);
    }
    t = await newTenant();
    const result = await connectSource(t, { name: 'Articles', type: 'postgresql', config });
    expect(result.connected.status).toBe(202);
    id = result.id;
    await settle();
    // A server that accepts connections and never answers: the connect timeout must trigger.
    silent = createServer(() => {
      canaryConnections++;
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  });

  afterAll(async () => {
    await admin.query(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
    silent.close();
  });

  it('ingests every row as a document and ends ready', async () => {
    const got = await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey });
    expect(got.body.data.status).toBe('ready');
    expect(got.body.data.stats.documents).toBe(rows.length);
    expect(JSON.stringify(got.body.data)).not.toContain(target.password);
  });

  it('finds rows by their text, with rowKey and typed metadata', async () => {
    const res = await call(app, 'POST', `/v1/knowledge-sources/${id}/search`, { key: t.apiKey, body: { query: 'how long to return items' } });
    const top = res.body.data.results[0];
    expect(top).toMatchObject({ rowKey: '1', title: 'Returns policy', metadata: { price: '19.90', tags: { section: 'help' } } });
    expect(top.metadata.published).toMatch(/^2024-01-1[45]T/);
    expect(top.path).toBeUndefined();
    const unicode = await call(app, 'POST', `/v1/knowledge-sources/${id}/search`, { key: t.apiKey, body: { query: 'Überweisung Zahlung' } });
    expect(unicode.body.data.results[0].text).toContain('Ünïcödé bleibt erhalten');
    const long = await call(app, 'POST', `/v1/knowledge-sources/${id}/search`, { key: t.apiKey, body: { query: 'chain oil every month' } });
    expect(long.body.data.results[0]).toMatchObject({ rowKey: '5' });
    expect(long.body.data.results[0].text).toContain('The chain needs oil');
  });

  it('reads a row as its values, and cites it by its title (or the start of its first text)', async () => {
    const express = (await call(app, 'POST', `/v1/knowledge-sources/${id}/search`, { key: t.apiKey, body: { query: 'express parcels next working day' } })).body.data.results[0];
    expect(express).toMatchObject({ rowKey: '2', title: 'Express shipping', text: 'Express parcels arrive the next working day.' });
    const untitled = (await call(app, 'POST', `/v1/knowledge-sources/${id}/search`, { key: t.apiKey, body: { query: 'row without a title' } })).body.data.results[0];
    expect(untitled).toMatchObject({ rowKey: '6', title: 'A row without a title still becomes a document.' });
    // A source may name the column its rows are cited by.
    const own = await newTenant();
    const named = await connectSource(own, { name: 'By body', type: 'postgresql', config: { ...config, textColumns: ['body'], titleColumn: 'title' } });
    expect(named.connected.status).toBe(202);
    await settle();
    const hit = (await call(app, 'POST', `/v1/knowledge-sources/${named.id}/search`, { key: own.apiKey, body: { query: 'returned within 30 days' } })).body.data.results[0];
    expect(hit).toMatchObject({ rowKey: '1', title: 'Returns policy', text: 'Items can be returned within 30 days of delivery.' });
    const missing = await connectSource(own, { name: 'x', type: 'postgresql', config: { ...config, titleColumn: 'headline' } });
    expect(missing.connected.status).toBe(400);
    expect(missing.connected.body.error.details.field).toBe('config.titleColumn');
  });

  it('gives a cited row’s title in an agent’s sources, as search does', async () => {
    const agent = await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Shop', model: 'local/extractive', capabilities: ['chat', 'document-search'], knowledgeSourceIds: [id] } });
    const reply = await call(app, 'POST', `/v1/agents/${agent.body.data.id}/converse`, { key: t.apiKey, body: { message: 'How fast do express parcels arrive?' } });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body.data.sources).toContainEqual(expect.objectContaining({ rowKey: '2', title: 'Express shipping' }));
  });

  it('names a column before a value only where the value means little alone', () => {
    const shape = { schema: 'public', table: 'orders', idColumn: 'id', textColumns: ['summary', 'status', 'currency'], metadataColumns: [] };
    const row = rowToDocument({ id: 7, summary: 'Two bicycles ordered for the shop in Lyon, paid by card.', status: 'shipped', currency: 'EUR' }, shape);
    expect(row.blocks.map((b) => b.text)).toEqual(['Two bicycles ordered for the shop in Lyon, paid by card.', 'status: shipped', 'currency: EUR']);
    expect(row.title).toBe('Two bicycles ordered for the shop in Lyon, paid by card.');
    // One text column: its value is the document, whatever its length.
    expect(rowToDocument({ id: 8, status: 'pending' }, { ...shape, textColumns: ['status'] }).blocks).toEqual([{ headings: [], text: 'pending' }]);
  });

  it('stores credentials sealed, never in clear', async () => {
    const sealed = await testRt.store.sourceSecrets.getSourceSecret<{ wrap: string }>(t.scope, id);
    expect(sealed?.wrap).toBe('local');
    expect(JSON.stringify(sealed)).not.toContain(target.password);
    expect(JSON.stringify(sealed)).not.toContain(`"${target.username}"`);
  });

  it('re-syncs incrementally: changed rows replaced, deleted rows removed, new rows added', async () => {
    await admin.query(`UPDATE ${table} SET body = 'Express parcels now arrive within two hours by cargo bike.', updated_at = now() + interval '1 second' WHERE id = 2`);
    await admin.query(`DELETE FROM ${table} WHERE id = 6`);
    await admin.query(`INSERT INTO ${table} (title, body, price, published) VALUES ('Gift cards', 'Gift cards never expire.', '25', '2024-06-01')`);
    const again = await call(app, 'POST', `/v1/knowledge-sources/${id}/connect`, { key: t.apiKey, body: {} });
    expect(again.status).toBe(202);
    await settle();
    const got = await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey });
    expect(got.body.data.status).toBe('ready');
    expect(got.body.data.stats.documents).toBe(rows.length); // one deleted, one added
    const search = async (query: string) =>
      (await call(app, 'POST', `/v1/knowledge-sources/${id}/search`, { key: t.apiKey, body: { query } })).body.data.results;
    expect((await search('cargo bike two hours'))[0]).toMatchObject({ rowKey: '2' });
    expect((await search('next working day')).map((r: { text: string }) => r.text).join(' ')).not.toContain('next working day');
    expect((await search('gift cards expire'))[0].title).toBe('Gift cards');
    expect((await search('row without a title')).map((r: { rowKey: string }) => r.rowKey)).not.toContain('6');
  });

  it('answers 400 naming config.table for a missing table, and for unknown columns', async () => {
    const own = await newTenant();
    const missing = await connectSource(own, { name: 'x', type: 'postgresql', config: { ...config, table: 'public.no_such_table' } });
    expect(missing.connected.status).toBe(400);
    expect(missing.connected.body.error.details.field).toBe('config.table');
    const column = await connectSource(own, { name: 'x', type: 'postgresql', config: { ...config, textColumns: ['body', 'no_such_column'] } });
    expect(column.connected.status).toBe(400);
    expect(column.connected.body.error.details.field).toBe('config.textColumns[1]');
  });

  it('refuses SQL in table and column names before any connection', async () => {
    const own = await newTenant();
    for (const [change, field] of [
      [{ table: `${table}; DROP TABLE ${table}` }, 'config.table'],
      [{ table: `public."${table}"` }, 'config.table'],
      [{ textColumns: ['body) FROM x; --'] }, 'config.textColumns[0]'],
      [{ idColumn: 'id OR 1=1' }, 'config.idColumn'],
    ] as const) {
      const res = await call(app, 'POST', '/v1/knowledge-sources', { key: own.apiKey, body: { name: 'x', type: 'postgresql', config: { ...config, ...change } } });
      expect(res.status).toBe(400);
      expect(res.body.error.details.field).toBe(field);
    }
    expect((await admin.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n).toBe(rows.length);
  });

  it('refuses loopback, private and metadata hosts with a 400 naming config.host and the setting, when the source is written', async () => {
    const own = await newTenant();
    const port = (silent.address() as { port: number }).port;
    for (const host of ['127.0.0.1', '0.0.0.0', '::1', '2130706433', '10.0.0.1', '169.254.169.254', '::ffff:127.0.0.1', '::127.0.0.1']) {
      const created = await call(app, 'POST', '/v1/knowledge-sources', { key: own.apiKey, body: { name: 'x', type: 'postgresql', config: { ...config, host, port } } });
      expect(created.status, host).toBe(400);
      expect(created.body.error.details.field, host).toBe('config.host');
      // The refusal says how an operator allows a host, except where nothing does (metadata).
      if (host !== '169.254.169.254') expect(created.body.error.details.reason, host).toMatch(/TOOL_ALLOWED_HOSTS=\S+:\d+/);
    }
    expect(canaryConnections).toBe(0);
  });

  it('answers 502 for an unreachable host and for a server that never answers (within 5 s)', async () => {
    const own = await newTenant();
    const closed = await connectSource(own, { name: 'x', type: 'postgresql', config: { ...config, port: 1 } });
    expect(closed.connected.status).toBe(502);
    expect(closed.connected.body.error.code).toBe('UPSTREAM_ERROR');
    const started = Date.now();
    const hanging = await connectSource(own, { name: 'x', type: 'postgresql', config: { ...config, port: (silent.address() as { port: number }).port } });
    expect(hanging.connected.status).toBe(502);
    expect(Date.now() - started).toBeLessThan(8000);
    expect(JSON.stringify(hanging.connected.body)).not.toContain(target.password);
  }, 20_000);

  it.runIf(target.checksPasswords)('answers 400 naming credentials for a wrong password, without echoing it', async () => {
    const own = await newTenant();
    const wrong = await connectSource(own, { name: 'x', type: 'postgresql', config }, { credentials: { username: target.username, password: 'not-the-password' } });
    expect(wrong.connected.status).toBe(400);
    expect(wrong.connected.body.error.details.field).toBe('credentials');
    expect(JSON.stringify(wrong.connected.body)).not.toContain('not-the-password');
  });

  it('requires credentials on the first connect', async () => {
    const own = await newTenant();
    const none = await connectSource(own, { name: 'x', type: 'postgresql', config }, {});
    expect(none.connected.status).toBe(400);
    expect(none.connected.body.error.details.field).toBe('credentials');
  });

  it('reads in a read-only transaction', async () => {
    const client = await connect({ ...config, ssl: false, port: target.port }, credentials, testRt.outbound);
    try {
      await expect(readOnly(client, () => client.query(`DELETE FROM ${table}`))).rejects.toMatchObject({ code: '25006' });
    } finally {
      await client.end();
    }
    expect((await admin.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n).toBe(rows.length);
  });
});
