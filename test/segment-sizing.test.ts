import { describe, expect, it, onTestFinished } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { cutGroups } from '../shared/knowledge/ingestion';
import { indexTuning } from '../shared/search/index-tuning';
import { normsStorage } from '../shared/store/search-index';
import { keys } from '../shared/store/keys';
import { batchOps, putRequest } from '../shared/store/batch';
import { call } from './helpers/http';
import { newTenant, type TestTenant } from './helpers/tenant';
import { testLocal, testRt } from './helpers/runtime';

/**
 * A sync sizes its segments from what it will write, so an initial sync is written once in few
 * large segments; those segments' norms may outgrow one item; documents stored before the compact
 * chunk lists are still read.
 */
const app = createLocalApp(testRt);
const settle = () => testLocal.ingestion!.drain();
const { batchWrite, queryAll } = batchOps(testRt.store.db);

const notes = (n: number, about = 'the shared subject') =>
  Array.from({ length: n }, (_, i) => ({ path: `n-${String(i).padStart(3, '0')}.txt`, content: `Note ${i}\n\nThis note is about topic${i} and ${about}. ${'Filler words for length. '.repeat(i % 7)}` }));

async function readySource(t: TestTenant, files: Array<{ path: string; content: string }>) {
  const id = (await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'notes', type: 'file-collection', files } })).body.data.id as string;
  expect((await call(app, 'POST', `/v1/knowledge-sources/${id}/connect`, { key: t.apiKey, body: {} })).status).toBe(202);
  await settle();
  return id;
}

const search = async (t: TestTenant, id: string, query: string) =>
  (await call(app, 'POST', `/v1/knowledge-sources/${id}/search`, { key: t.apiKey, body: { query, topK: 20 } })).body.data.results.map((r: { path: string; score: number }) => `${r.path} ${r.score}`);

describe('segment sizing', () => {
  it('cuts work into consecutive groups of at most a segment’s estimated chunks, each filled first, within the limits given', () => {
    const tuned = indexTuning.segmentChunks;
    indexTuning.segmentChunks = 10;
    onTestFinished(() => void (indexTuning.segmentChunks = tuned));
    // 25 chunks in all: in order, never split inside an item, each group as full as it can be.
    const sizes = [3, 3, 3, 1, 1, 1, 1, 4, 4, 2, 2];
    const chunks = { of: (n: number) => n, max: indexTuning.segmentChunks };
    const groups = cutGroups(sizes, [chunks]);
    expect(groups.flat()).toEqual(sizes);
    expect(groups.map((g) => g.reduce((a, b) => a + b, 0))).toEqual([10, 7, 8]);
    // An item larger than a segment is alone in its own.
    expect(cutGroups([2, 30, 2], [chunks])).toEqual([[2], [30], [2]]);
    // Another limit (here: at most two items a group) cuts sooner.
    expect(cutGroups([1, 1, 1, 1, 1], [chunks, { of: () => 1, max: 2 }])).toEqual([[1, 1], [1, 1], [1]]);
    expect(cutGroups([], [chunks])).toEqual([]);
  });

  it('writes an initial sync as one segment when it fits, and as several when it does not', async () => {
    const t = await newTenant();
    const one = await readySource(t, notes(120));
    expect((await testRt.store.searchIndex.readSegments(t.scope, one)).filter((s) => s.state === 'live')).toHaveLength(1);
    const tuned = indexTuning.segmentChunks;
    indexTuning.segmentChunks = 50;
    onTestFinished(() => void (indexTuning.segmentChunks = tuned));
    const several = await readySource(t, notes(120));
    const live = (await testRt.store.searchIndex.readSegments(t.scope, several)).filter((s) => s.state === 'live');
    expect(live.map((s) => s.chunks)).toEqual([50, 50, 20]);
    // The same documents, the same ranking: only their layout differs.
    for (const query of ['topic7 shared subject', 'filler words length']) expect(await search(t, several, query)).toEqual(await search(t, one, query));
  });

  it('keeps a segment’s norms in several items when they outgrow one, and searches them the same', async () => {
    const t = await newTenant();
    const whole = await readySource(t, notes(60));
    const saved = normsStorage.partBytes;
    normsStorage.partBytes = 16;
    onTestFinished(() => void (normsStorage.partBytes = saved));
    const parted = await readySource(t, notes(60));
    expect((await queryAll(keys.normsPartition(t.scope, parted))).length).toBeGreaterThan(5);
    for (const query of ['topic42 shared subject', 'filler words length note']) expect(await search(t, parted, query)).toEqual(await search(t, whole, query));
    // Deleting the source removes every part.
    expect((await call(app, 'DELETE', `/v1/knowledge-sources/${parted}`, { key: t.apiKey })).status).toBe(200);
    await settle();
    expect(await queryAll(keys.normsPartition(t.scope, parted))).toEqual([]);
  });

  it('replaces a document stored with its chunks as a list (before the compact form) without leaving them behind', async () => {
    const t = await newTenant();
    const scope = t.scope;
    const id = await readySource(t, notes(10));
    // Store one document as items written before the compact form held it.
    const [stored] = [...(await testRt.store.searchIndex.getDocuments(scope, id, ['n-003.txt'])).values()];
    await batchWrite([putRequest({ ...keys.document(scope, id, 'n-003.txt'), documentKey: stored!.documentKey, documentId: stored!.documentId, hash: stored!.hash, chunks: stored!.chunks })]);
    expect((await testRt.store.searchIndex.getDocuments(scope, id, ['n-003.txt'])).get('n-003.txt')).toEqual({ documentKey: stored!.documentKey, documentId: stored!.documentId, hash: stored!.hash, chunks: stored!.chunks });
    await call(app, 'POST', `/v1/knowledge-sources/${id}/files`, { key: t.apiKey, body: { files: [{ path: 'n-003.txt', content: 'Note 3\n\nNow about a rewritten matter.' }] } });
    await settle();
    const source = (await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey })).body.data;
    expect(source.stats).toMatchObject({ documents: 10, chunks: 10 });
    expect(await search(t, id, 'topic3')).toEqual([]);
    expect((await search(t, id, 'rewritten matter'))[0]).toMatch(/^n-003\.txt /);
  });
});
