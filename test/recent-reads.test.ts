import { describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { createStore } from '../shared/store';
import { RECENT_MS } from '../shared/store/recent-reads';
import { call } from './helpers/http';
import { newTenant } from './helpers/tenant';
import { testLocal, testRt } from './helpers/runtime';

/**
 * Searches and turns may take a source, its segments and an agent's draft as their instance read
 * them within RECENT_MS: what this instance writes is seen at once, what another writes within
 * RECENT_MS. Two instances here are two stores over the same table, as two Lambdas are.
 */
const here = createLocalApp(testRt);
const elsewhere = createLocalApp({ ...testRt, store: createStore(testRt.store.db, testRt.clock) });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('recent reads on the hot paths', () => {
  it('see this instance’s writes at once and another’s within RECENT_MS, and never keep a source that is not ready', async () => {
    const t = await newTenant();
    const files = [{ path: 'a.md', content: '# Parcels\n\nA damaged parcel is refunded within five days.' }];
    const created = await call(here, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'kb', type: 'file-collection', files } });
    const id = created.body.data.id as string;
    const search = (app: typeof here) => call(app, 'POST', `/v1/knowledge-sources/${id}/search`, { key: t.apiKey, body: { query: 'damaged parcel' } });

    // Not ready yet: refused, and the refusal is not kept — once ready, it is searchable at once.
    expect((await search(elsewhere)).status).toBe(409);
    await call(here, 'POST', `/v1/knowledge-sources/${id}/connect`, { key: t.apiKey, body: {} });
    await testLocal.ingestion!.drain();
    const first = await search(elsewhere);
    expect(first.status).toBe(200);
    expect(first.body.data.results).toHaveLength(1);

    expect((await search(here)).body.data.results).toHaveLength(1);
    // A document added here is found here at once (this instance's writes forget what it read)…
    await call(here, 'POST', `/v1/knowledge-sources/${id}/files`, { key: t.apiKey, body: { files: [{ path: 'b.md', content: '# Returns\n\nA damaged parcel can also be returned.' }] } });
    await call(here, 'POST', `/v1/knowledge-sources/${id}/connect`, { key: t.apiKey, body: {} });
    await testLocal.ingestion!.drain();
    expect((await search(here)).body.data.results).toHaveLength(2);
    // …and by the other instance within RECENT_MS.
    await sleep(RECENT_MS + 50);
    expect((await search(elsewhere)).body.data.results).toHaveLength(2);

    // Deleted elsewhere: gone here within RECENT_MS.
    expect((await search(here)).status).toBe(200);
    expect((await call(elsewhere, 'DELETE', `/v1/knowledge-sources/${id}`, { key: t.apiKey })).status).toBe(200);
    await sleep(RECENT_MS + 50);
    expect((await search(here)).status).toBe(404);
  });

  it('run the draft an agent had when this instance changed it, at once', async () => {
    const t = await newTenant();
    const agent = await call(here, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Ada', model: 'gpt-4', capabilities: ['chat'] } });
    const id = agent.body.data.id as string;
    const converse = () => call(here, 'POST', `/v1/agents/${id}/converse`, { key: t.apiKey, body: { message: 'hello' } });
    expect((await converse()).body.data.reply).toContain('Ada');
    const current = await call(here, 'GET', `/v1/agents/${id}`, { key: t.apiKey });
    const { id: _id, createdAt: _c, updatedAt: _u, version: _v, ...fields } = current.body.data as Record<string, unknown>;
    expect((await call(here, 'PUT', `/v1/agents/${id}`, { key: t.apiKey, body: { ...fields, name: 'Bertrand' } })).status).toBe(200);
    const after = await converse();
    expect(after.body.data.reply).toContain('Bertrand');
  });
});
