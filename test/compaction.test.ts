import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { indexTuning } from '../shared/search/index-tuning';
import { SEGMENT_SPAN } from '../shared/store/search-index';
import { keys } from '../shared/store/keys';
import { call } from './helpers/http';
import { newTenant, type TestTenant } from './helpers/tenant';
import { testLocal, testRt } from './helpers/runtime';

/**
 * Compaction through the real ingestion queue and DynamoDB Local: a collection re-synced several
 * times (each sync a segment, each change leaving deleted chunks behind) is merged into one
 * segment; searches before, during and after see exactly the live documents; the old items go;
 * later syncs replace and delete documents by their new chunk numbers. A connected collection
 * syncs by itself when its files change, so each change here is exactly one sync (a connect after
 * it would be a second sync racing the first, and may leave an empty segment).
 */
const app = createLocalApp(testRt);
const saved = { ...indexTuning };
const settle = () => testLocal.ingestion!.drain();

/** Each file has a word of its own for each version (letters only, so the analyser keeps it whole). */
const letters = (n: number) => [...String(n)].map((d) => 'bcdfghjklm'[Number(d)]).join('');
const marker = (i: number, round: number) => `zq${letters(i)}w${letters(round)}`;
const file = (i: number, round: number) => ({
  path: `notes/${String(i).padStart(3, '0')}.md`,
  content: `# Note ${i}\n\nThe courier took parcel ${i} to the depot. Marker ${marker(i, round)} stays with this version only. ${'Handled with care and signed for. '.repeat(3 + (i % 4))}`,
});

describe('compaction', () => {
  let t: TestTenant;
  let id: string;
  const versions = new Map<number, number>();
  const api = (method: string, path: string, body?: unknown) => call(app, method, `/v1/knowledge-sources/${id}${path}`, { key: t.apiKey, body });
  const search = async (query: string, topK = 5) => (await api('POST', '/search', { query, topK })).body.data.results as Array<{ path: string; chunkId: string; text: string }>;
  const segments = () => testRt.store.searchIndex.readSegments(t.scope, id);

  /** Every file found by its current marker, no file by an old one. */
  async function expectLiveDocuments() {
    for (const [i, round] of versions) {
      // Its own version first (feedback then brings in others), and only once: no older chunk of it survives.
      const found = await search(marker(i, round), 3);
      expect(found[0]!.path).toBe(file(i, round).path);
      expect(found.filter((r) => r.path === file(i, round).path)).toHaveLength(1);
      for (let old = 0; old < round; old++) expect(await search(marker(i, old), 3)).toEqual([]);
    }
  }

  beforeAll(async () => {
    Object.assign(indexTuning, { compactAfterSegments: 1000, compactAfterDeletedShare: 1, compactAfterDeletedChunks: 1, blockPostings: 4, compactionGraceSeconds: 0 });
    t = await newTenant('unlimited');
    const created = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'notes', type: 'file-collection', files: Array.from({ length: 40 }, (_, i) => file(i, 0)) } });
    id = created.body.data.id;
    for (let i = 0; i < 40; i++) versions.set(i, 0);
    expect((await api('POST', '/connect', {})).status).toBe(202);
    await settle();
    // Four more syncs, each changing a few files: four more segments, and deleted chunks in the earlier ones.
    for (let round = 1; round <= 4; round++) {
      const changed = Array.from({ length: 6 }, (_, k) => (round * 7 + k * 5) % 40);
      expect((await api('POST', '/files', { files: changed.map((i) => file(i, round)) })).status).toBe(200);
      for (const i of changed) versions.set(i, round);
      await settle();
    }
  }, 120_000);
  afterAll(() => Object.assign(indexTuning, saved));

  it('merges the segments without deleted chunks, swapping them in while searches see the same documents', async () => {
    const before = (await segments()).filter((s) => s.state === 'live');
    expect(before.length).toBe(5);
    const deleted = before.reduce((n, s) => n + s.deletedCount, 0);
    expect(deleted).toBeGreaterThan(0);
    const chunks = (await api('GET', '')).body.data.stats.chunks as number;
    await expectLiveDocuments();
    const parcels = (await search('courier parcel depot', 40)).map((r) => r.chunkId).sort();
    expect(parcels).toHaveLength(40);

    const accepted = await api('POST', '/compact');
    expect(accepted.status).toBe(202);
    expect(accepted.body.data.compactionId).toMatch(/^cmp_/);
    expect((await api('GET', '')).body.data.compaction.id).toBe(accepted.body.data.compactionId);
    // A second request while the first holds the source: 409 naming it.
    expect((await call(app, 'POST', '/v1/knowledge-sources/ks_missing/compact', { key: t.apiKey })).status).toBe(404);
    const again = await api('POST', '/compact');
    expect(again.status).toBe(409);
    expect(again.body.error.details.compactionId).toBe(accepted.body.data.compactionId);

    // Searches while the worker merges and swaps: always the same chunks (ids survive compaction).
    let done = false;
    const during = (async () => {
      let searches = 0;
      while (!done || searches < 5) {
        expect((await search('courier parcel depot', 40)).map((r) => r.chunkId).sort()).toEqual(parcels);
        searches++;
      }
      return searches;
    })();
    await settle();
    done = true;
    expect(await during).toBeGreaterThanOrEqual(5);

    const after = (await segments()).filter((s) => s.state === 'live');
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ chunks, deletedCount: 0 });
    expect((await api('GET', '')).body.data.compaction).toBeUndefined();
    expect((await api('GET', '')).body.data.stats.chunks).toBe(chunks);
    await expectLiveDocuments();
    expect((await search('courier parcel depot', 40)).map((r) => r.chunkId).sort()).toEqual(parcels);

    // The old segments' items are gone: segment items, chunks, postings (directories and blocks).
    const all = await testRt.store.searchIndex.readSegments(t.scope, id);
    expect(all.map((s) => s.segNo)).toEqual([after[0]!.segNo]);
    const { queryAll } = await import('../shared/store/batch').then((m) => m.batchOps(testRt.store.db));
    const chunkItems = await queryAll(keys.chunkPartition(t.scope, id));
    expect(chunkItems).toHaveLength(chunks);
    expect(chunkItems.every((c) => Math.floor(Number(c.docNo) / SEGMENT_SPAN) === after[0]!.segNo)).toBe(true);
    const courier = await queryAll(keys.termPartition(t.scope, id, 'courier'));
    expect(courier.length).toBeGreaterThan(1); // a directory and its blocks (4 postings a block here)
    expect(courier.every((item) => String(item.sk) === keys.termSegment(t.scope, id, 'courier', after[0]!.segNo).sk || String(item.sk).startsWith('~'))).toBe(true);
  }, 120_000);

  it('lets later syncs replace and delete documents by their new chunk numbers', async () => {
    expect((await api('POST', '/files', { files: [file(3, 9)] })).status).toBe(200);
    versions.set(3, 9);
    // Each change its own sync, finished before the next: stats are counted when a sync finishes.
    await settle();
    expect((await api('DELETE', `/files?path=${encodeURIComponent(file(4, 0).path)}`)).status).toBe(200);
    const removed = versions.get(4)!;
    versions.delete(4);
    await settle();
    await expectLiveDocuments();
    expect(await search(marker(4, removed), 3)).toEqual([]);
    const live = (await segments()).filter((s) => s.state === 'live');
    expect(live.reduce((n, s) => n + s.chunks - s.deletedCount, 0)).toBe((await api('GET', '')).body.data.stats.chunks);
  }, 60_000);

  it('does the same work once when its message is delivered twice at the same time', async () => {
    const accepted = await api('POST', '/compact');
    expect(accepted.status).toBe(202);
    // A duplicate of the queued message (SQS delivers at least once).
    await testRt.queues.ingestion.send([{ type: 'compact', tenantId: t.scope.tenantId, sourceId: id, compactionId: accepted.body.data.compactionId }]);
    await settle();
    const live = (await segments()).filter((s) => s.state === 'live');
    expect(live).toHaveLength(1);
    expect(live[0]!.deletedCount).toBe(0);
    await expectLiveDocuments();
    const { queryAll } = await import('../shared/store/batch').then((m) => m.batchOps(testRt.store.db));
    expect(await queryAll(keys.chunkPartition(t.scope, id))).toHaveLength(live[0]!.chunks);
  }, 60_000);

  it('finishes after a crash before the swap and another after it, each redelivery going on from where it stopped', async () => {
    // Two more syncs, so there is something to merge.
    for (const round of [20, 21]) {
      expect((await api('POST', '/files', { files: [file(6, round)] })).status).toBe(200);
      versions.set(6, round);
      await settle();
    }
    expect((await segments()).filter((s) => s.state === 'live').length).toBeGreaterThan(1);
    const index = testRt.store.searchIndex;
    const swap = vi.spyOn(index, 'swapSegments').mockRejectedValueOnce(new Error('worker died before the swap'));
    const documents = vi.spyOn(index, 'writeDocuments').mockRejectedValueOnce(new Error('worker died after the swap'));
    try {
      expect((await api('POST', '/compact')).status).toBe(202);
      await settle();
      expect(swap).toHaveBeenCalledTimes(2);
      expect(documents).toHaveBeenCalledTimes(2);
    } finally {
      swap.mockRestore();
      documents.mockRestore();
    }
    const live = (await segments()).filter((s) => s.state === 'live');
    expect(live).toHaveLength(1);
    expect((await api('GET', '')).body.data.compaction).toBeUndefined();
    await expectLiveDocuments();
    // The documents name the new chunks: replacing one now removes its old chunk.
    expect((await api('POST', '/files', { files: [file(6, 22)] })).status).toBe(200);
    versions.set(6, 22);
    await settle();
    await expectLiveDocuments();
  }, 120_000);

  it('leaves nothing of the index behind, compaction plans included, when the source is deleted', async () => {
    const { queryAll } = await import('../shared/store/batch').then((m) => m.batchOps(testRt.store.db));
    const plans = keys.compaction(t.scope, id, '').pk;
    expect((await queryAll(plans)).length).toBeGreaterThan(0);
    const other = (await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'copy', type: 'file-collection', files: [file(1, 0)] } })).body.data.id as string;
    expect((await call(app, 'POST', `/v1/knowledge-sources/${other}/connect`, { key: t.apiKey, body: {} })).status).toBe(202);
    await settle();
    // A second sync, a second segment: something to merge.
    expect((await call(app, 'POST', `/v1/knowledge-sources/${other}/files`, { key: t.apiKey, body: { files: [file(2, 0)] } })).status).toBe(200);
    await settle();
    expect((await call(app, 'POST', `/v1/knowledge-sources/${other}/compact`, { key: t.apiKey })).status).toBe(202);
    await settle();
    const otherPlans = keys.compaction(t.scope, other, '').pk;
    expect((await queryAll(otherPlans)).length).toBeGreaterThan(0);
    expect((await call(app, 'DELETE', `/v1/knowledge-sources/${other}`, { key: t.apiKey })).status).toBe(200);
    await settle();
    expect(await queryAll(otherPlans)).toEqual([]);
    expect(await queryAll(keys.normsPartition(t.scope, other))).toEqual([]);
    expect(await queryAll(keys.chunkPartition(t.scope, other))).toEqual([]);
  }, 60_000);

  it('starts by itself after a sync that leaves too many segments', async () => {
    indexTuning.compactAfterSegments = 1;
    expect((await api('POST', '/files', { files: [file(5, 11)] })).status).toBe(200);
    versions.set(5, 11);
    await settle();
    expect((await segments()).filter((s) => s.state === 'live')).toHaveLength(1);
    await expectLiveDocuments();
  }, 60_000);
});
