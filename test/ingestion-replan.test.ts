import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { createKnowledgeSourcesApp } from '../functions/knowledge-sources/app';
import { handleIngestionMessage } from '../shared/knowledge/ingestion';
import type { IngestionMessage } from '../shared/queue/messages';
import type { Runtime } from '../shared/runtime';
import { call } from './helpers/http';
import { newTenant } from './helpers/tenant';
import { runtimeLater, testRt } from './helpers/runtime';
import { indexTuning } from '../shared/search/index-tuning';

/**
 * A sync planned twice: the first planner died after sending its batches but before recording
 * that it had, so the redelivered sync message planned again, over the documents not yet indexed,
 * numbering its batches from 0 again. Both attempts' batches then run. Found by the kill-recovery
 * test under load: a batch of the second plan was taken for one of the first (same position) and
 * skipped, and the source ended ready without its documents.
 */
const delivery = { receiveCount: 1, maxReceives: 5 };

describe('a sync planned twice', () => {
  it('indexes every document once, whichever attempt’s batches run', async () => {
    // Segments of 200 chunks: 450 files make three batches.
    const tuned = { ...indexTuning };
    indexTuning.segmentChunks = 200;
    onTestFinished(() => void Object.assign(indexTuning, tuned));
    const queued: IngestionMessage[] = [];
    const rt: Runtime = { ...testRt, queues: { ...testRt.queues, ingestion: { send: async (messages) => void queued.push(...messages), pending: async () => 0 } } };
    const app = createKnowledgeSourcesApp(rt);
    const t = await newTenant();
    const files = Array.from({ length: 450 }, (_, i) => ({ path: `n-${String(i).padStart(4, '0')}.txt`, content: `Note ${i}\n\nAbout topic${i} and the shared subject.` }));
    const id = (await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'notes', type: 'file-collection', files } })).body.data.id as string;
    expect((await call(app, 'POST', `/v1/knowledge-sources/${id}/connect`, { key: t.apiKey, body: {} })).status).toBe(202);
    const sync = queued.shift()!;
    expect(sync.type).toBe('sync');

    // First attempt: the batches go out, then the planner dies.
    const markSent = vi.spyOn(rt.store.syncLedger, 'markSyncSent').mockRejectedValueOnce(new Error('planner died'));
    await expect(handleIngestionMessage(rt, sync, delivery)).rejects.toThrow('planner died');
    markSent.mockRestore();
    const first = queued.splice(0);
    expect(first.map((m) => m.type === 'batch' && m.batch)).toEqual([0, 1, 2]);
    // One of its batches runs before the sync message comes back.
    await handleIngestionMessage(rt, first[0]!, delivery);

    // The planning lease runs out; the redelivered sync plans what is left: 250 files, batches 0 and 1.
    await handleIngestionMessage(runtimeLater(rt, 10 * 60_000), sync, { ...delivery, receiveCount: 2 });
    const second = queued.splice(0);
    expect(second.map((m) => m.type === 'batch' && m.batch)).toEqual([0, 1]);

    // The second attempt's batches, then the first attempt's others (late, as SQS may deliver them).
    for (const message of [...second, ...first.slice(1)]) await handleIngestionMessage(rt, message, delivery);
    for (const message of queued.splice(0)) await handleIngestionMessage(rt, message, delivery);

    const source = (await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey })).body.data;
    expect(source.status).toBe('ready');
    expect(source.stats).toMatchObject({ documents: 450, chunks: 450 });
    const found = await call(app, 'POST', `/v1/knowledge-sources/${id}/search`, { key: t.apiKey, body: { query: 'shared subject', topK: 100, feedback: false } });
    const paths = found.body.data.results.map((r: { path: string }) => r.path);
    expect(new Set(paths).size).toBe(paths.length);
  });

  it('plans again the documents of a batch that died before sealing its segment, so the sync is not ready without them', async () => {
    const tuned = { ...indexTuning };
    indexTuning.segmentChunks = 200;
    onTestFinished(() => void Object.assign(indexTuning, tuned));
    const queued: IngestionMessage[] = [];
    const rt: Runtime = { ...testRt, queues: { ...testRt.queues, ingestion: { send: async (messages) => void queued.push(...messages), pending: async () => 0 } } };
    const app = createKnowledgeSourcesApp(rt);
    const t = await newTenant();
    const files = Array.from({ length: 450 }, (_, i) => ({ path: `n-${String(i).padStart(4, '0')}.txt`, content: `Note ${i}\n\nAbout topic${i} and the shared subject.` }));
    const id = (await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'notes', type: 'file-collection', files } })).body.data.id as string;
    expect((await call(app, 'POST', `/v1/knowledge-sources/${id}/connect`, { key: t.apiKey, body: {} })).status).toBe(202);
    const sync = queued.shift()!;

    // The planner sends its batches and dies; the first batch records its documents and dies before sealing its segment.
    const markSent = vi.spyOn(rt.store.syncLedger, 'markSyncSent').mockRejectedValueOnce(new Error('planner died'));
    await expect(handleIngestionMessage(rt, sync, delivery)).rejects.toThrow('planner died');
    markSent.mockRestore();
    const first = queued.splice(0);
    const seal = vi.spyOn(rt.store.searchIndex, 'sealSegment').mockRejectedValueOnce(new Error('batch died'));
    await expect(handleIngestionMessage(rt, first[0]!, delivery)).rejects.toThrow('batch died');
    seal.mockRestore();

    // The sync is planned again; its batches alone run (the dead batch's message is still to come back).
    await handleIngestionMessage(runtimeLater(rt, 10 * 60_000), sync, { ...delivery, receiveCount: 2 });
    for (let message = queued.shift(); message; message = queued.shift()) await handleIngestionMessage(rt, message, delivery);
    const source = (await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey })).body.data;
    expect(source.status).toBe('ready');
    // Every note is found, the dead batch's first one too.
    const found = await call(app, 'POST', `/v1/knowledge-sources/${id}/search`, { key: t.apiKey, body: { query: 'topic0', topK: 1, feedback: false } });
    expect(found.body.data.results[0]?.path).toBe('n-0000.txt');
    expect(source.stats).toMatchObject({ documents: 450, chunks: 450 });
  });
});
