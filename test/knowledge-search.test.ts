import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { newTenant, type TestTenant } from './helpers/tenant';
import { testRt, testLocal } from './helpers/runtime';

const app = createLocalApp(testRt);
const settle = () => testLocal.ingestion!.drain();

const files = [
  { path: 'policies/returns.md', content: '# Returns\n\nItems can be returned within 30 days of delivery.\n\n## Refunds\n\nRefunds reach your card within 5 business days.' },
  { path: 'shipping.txt', content: 'Shipping\n\nStandard shipping takes 3 to 5 days. Express shipping arrives the next day.' },
  { path: 'about.html', content: '<html><head><title>About us</title><style>.x{}</style></head><body><h1>Our story</h1><p>Founded in Lyon in 1999 by two cyclists.</p><script>var tracking = 1;</script></body></html>' },
  { path: 'stores.json', content: JSON.stringify([{ city: 'Paris', opening: '9:00' }, { city: 'Berlin', opening: '10:00' }]) },
  { path: 'prices.csv', content: 'product,price\nbicycle helmet,49\nrear light,19\n' },
];

async function readySource(t: TestTenant, body: unknown) {
  const created = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body });
  const connected = await call(app, 'POST', `/v1/knowledge-sources/${created.body.data.id}/connect`, { key: t.apiKey, body: {} });
  expect(connected.status).toBe(202);
  expect(connected.body.data.status).toBe('pending');
  await settle();
  return created.body.data.id as string;
}

const search = (t: TestTenant, id: string, body: unknown) => call(app, 'POST', `/v1/knowledge-sources/${id}/search`, { key: t.apiKey, body });

describe('file-collection ingestion and search', () => {
  let t: TestTenant;
  let id: string;
  beforeAll(async () => {
    t = await newTenant();
    id = await readySource(t, { name: 'Help centre', type: 'file-collection', files });
  });

  it('ends ready with statistics', async () => {
    const got = await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey });
    expect(got.body.data.status).toBe('ready');
    expect(got.body.data.stats).toMatchObject({ documents: 5 });
    expect(got.body.data.stats.chunks).toBeGreaterThanOrEqual(5);
    expect(got.body.data.stats.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('finds the passage that answers, with its path, ids and metadata', async () => {
    const res = await search(t, id, { query: 'how many days do I have to return an item?' });
    expect(res.status).toBe(200);
    const top = res.body.data.results[0];
    expect(top).toMatchObject({ path: 'policies/returns.md', metadata: { contentType: 'text/markdown' } });
    expect(top.text).toContain('returned within 30 days');
    expect(top.chunkId).toMatch(/^chk_/);
    expect(top.documentId).toMatch(/^doc_/);
    expect(top.title).toBe('Returns');
    expect(typeof res.body.data.took).toBe('number');
  });

  it('indexes html text without markup or scripts, json and csv values', async () => {
    const story = await search(t, id, { query: 'founded Lyon cyclists' });
    expect(story.body.data.results[0]).toMatchObject({ path: 'about.html', title: 'About us › Our story' });
    expect((await search(t, id, { query: 'tracking' })).body.data.results).toEqual([]);
    expect((await search(t, id, { query: 'Berlin opening' })).body.data.results[0].path).toBe('stores.json');
    expect((await search(t, id, { query: 'helmet price' })).body.data.results[0].text).toContain('product: bicycle helmet; price: 49');
  });

  it('honours topK and filters', async () => {
    const all = await search(t, id, { query: 'shipping days returned delivery', topK: 1 });
    expect(all.body.data.results).toHaveLength(1);
    const filtered = await search(t, id, { query: 'days', filter: { pathPrefix: 'policies/' } });
    expect(filtered.body.data.results.every((r: { path: string }) => r.path.startsWith('policies/'))).toBe(true);
    expect(filtered.body.data.results.length).toBeGreaterThan(0);
  });

  it('rejects an empty query and a bad topK, naming the field', async () => {
    const empty = await search(t, id, { query: '   ' });
    expect(empty.status).toBe(400);
    expect(empty.body.error.details.field).toBe('query');
    expect((await search(t, id, { query: 'x', topK: 101 })).body.error.details.field).toBe('topK');
  });

  it('answers 409 with the status for a source that is not ready', async () => {
    const created = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'new', type: 'file-collection', files } });
    const res = await search(t, created.body.data.id, { query: 'returns' });
    expect(res.status).toBe(409);
    expect(res.body.error.details.status).toBe('created');
  });

  it('re-indexes a changed file, replacing its chunks, and drops a removed one', async () => {
    const own = await newTenant();
    const sid = await readySource(own, { name: 'kb', type: 'file-collection', files });
    const before = (await call(app, 'GET', `/v1/knowledge-sources/${sid}`, { key: own.apiKey })).body.data.stats;
    const changed = await call(app, 'POST', `/v1/knowledge-sources/${sid}/files`, {
      key: own.apiKey,
      body: { files: [{ path: 'policies/returns.md', content: '# Returns\n\nUnworn shoes may be exchanged within 60 days.' }] },
    });
    expect(changed.body.data.status).toBe('pending');
    await settle();
    expect((await search(own, sid, { query: 'exchanged shoes sixty 60 days' })).body.data.results[0].path).toBe('policies/returns.md');
    const old = await search(own, sid, { query: 'refunds card business' });
    expect(old.body.data.results.map((r: { path: string }) => r.path)).not.toContain('policies/returns.md');
    const after = (await call(app, 'GET', `/v1/knowledge-sources/${sid}`, { key: own.apiKey })).body.data.stats;
    expect(after.documents).toBe(before.documents);
    expect(after.chunks).toBeLessThan(before.chunks); // the two-section file became one chunk: nothing left behind

    await call(app, 'DELETE', `/v1/knowledge-sources/${sid}/files?path=shipping.txt`, { key: own.apiKey });
    await settle();
    expect((await search(own, sid, { query: 'express shipping next day' })).body.data.results.map((r: { path: string }) => r.path)).not.toContain('shipping.txt');
    expect((await call(app, 'GET', `/v1/knowledge-sources/${sid}`, { key: own.apiKey })).body.data.stats.documents).toBe(4);
  });

  it('links the agent named on connect', async () => {
    const own = await newTenant();
    const agent = (await call(app, 'POST', '/v1/agents', { key: own.apiKey, body: { name: 'a', model: 'gpt-4' } })).body.data;
    const ks = (await call(app, 'POST', '/v1/knowledge-sources', { key: own.apiKey, body: { name: 'k', type: 'file-collection', files } })).body.data;
    const connected = await call(app, 'POST', `/v1/knowledge-sources/${ks.id}/connect`, { key: own.apiKey, body: { agentId: agent.id, options: { sync: false } } });
    expect(connected.status).toBe(200);
    expect(connected.body.data.status).toBe('created');
    const linked = (await call(app, 'GET', `/v1/agents/${agent.id}`, { key: own.apiKey })).body.data;
    expect(linked.knowledgeSourceIds).toEqual([ks.id]);
    // Linked to be searched: the agent gains the capability it needs for that.
    expect(linked.capabilities).toEqual(['chat', 'document-search']);
    const missing = await call(app, 'POST', `/v1/knowledge-sources/${ks.id}/connect`, { key: own.apiKey, body: { agentId: 'agt_01m7y62dvspbq7k3p58zfb7w0n' } });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.field).toBe('agentId');
  });

  it('links no more sources to an agent than a PUT allows (20)', async () => {
    const own = await newTenant();
    const ids: string[] = [];
    for (let i = 0; i < 21; i++) {
      ids.push((await call(app, 'POST', '/v1/knowledge-sources', { key: own.apiKey, body: { name: `k${i}`, type: 'file-collection', files: [] } })).body.data.id);
    }
    const agent = (await call(app, 'POST', '/v1/agents', { key: own.apiKey, body: { name: 'a', model: 'gpt-4', knowledgeSourceIds: ids.slice(0, 20) } })).body.data;
    const refused = await call(app, 'POST', `/v1/knowledge-sources/${ids[20]}/connect`, { key: own.apiKey, body: { agentId: agent.id, options: { sync: false } } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toMatchObject({ field: 'agentId', limit: 20 });
    expect((await call(app, 'GET', `/v1/agents/${agent.id}`, { key: own.apiKey })).body.data.knowledgeSourceIds).toHaveLength(20);
    // One it already lists connects as before.
    const again = await call(app, 'POST', `/v1/knowledge-sources/${ids[0]}/connect`, { key: own.apiKey, body: { agentId: agent.id, options: { sync: false } } });
    expect(again.status).toBe(200);
  });

  it('purges the index when the source is deleted', async () => {
    const own = await newTenant();
    const sid = await readySource(own, { name: 'kb', type: 'file-collection', files });
    // Segment -1 is in no cache entry: the store reads DynamoDB.
    const postings = async () => (await testRt.store.searchIndex.readTermItems(own.scope, sid, ['cyclist'], [-1])).get('cyclist');
    expect((await postings())!.length).toBe(1);
    await call(app, 'DELETE', `/v1/knowledge-sources/${sid}`, { key: own.apiKey });
    await settle();
    expect(await postings()).toEqual([]);
  });
});

describe('chunking settings', () => {
  it('uses the source’s chunk size and rejects an overlap above half of it', async () => {
    const t = await newTenant();
    const long = Array.from({ length: 40 }, (_, i) => `Sentence number ${i} talks about topic ${i}.`).join(' ');
    const small = await readySource(t, { name: 'small', type: 'file-collection', chunking: { size: 300, overlap: 0 }, files: [{ path: 'a.txt', content: long }] });
    const big = await readySource(t, { name: 'big', type: 'file-collection', files: [{ path: 'a.txt', content: long }] });
    const stats = async (id: string) => (await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey })).body.data.stats;
    expect((await stats(small)).chunks).toBeGreaterThan(4);
    expect((await stats(big)).chunks).toBe(2);
    const bad = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'x', type: 'file-collection', chunking: { size: 300, overlap: 200 } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('chunking.overlap');
  });
});

describe('replacing a connected source', () => {
  it('re-syncs it so the index follows the new files', async () => {
    const t = await newTenant();
    const id = await readySource(t, { name: 'kb', type: 'file-collection', files });
    const put = await call(app, 'PUT', `/v1/knowledge-sources/${id}`, {
      key: t.apiKey,
      body: { name: 'kb', type: 'file-collection', files: [{ path: 'only.md', content: '# Warranty\n\nBicycles carry a two-year warranty.' }] },
    });
    expect(put.body.data.status).toBe('pending');
    await settle();
    const source = (await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey })).body.data;
    expect(source).toMatchObject({ status: 'ready', stats: { documents: 1, chunks: 1 } });
    expect((await search(t, id, { query: 'warranty years' })).body.data.results[0].path).toBe('only.md');
    expect((await search(t, id, { query: 'returned within 30 days' })).body.data.results).toEqual([]);
  });
});
