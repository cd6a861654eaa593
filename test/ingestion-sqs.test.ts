import { SQSClient, SendMessageCommand } from '@aws-sdk/client-sqs';
import { startFauxqs, type FauxqsServer } from 'fauxqs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createKnowledgeSourcesApp } from '../functions/knowledge-sources/app';
import { handleIngestionMessage } from '../shared/knowledge/ingestion';
import type { IngestionMessage } from '../shared/queue/messages';
import { MAX_RECEIVES } from '../shared/queue/queue';
import { sqsQueue } from '../shared/queue/sqs-queue';
import { sqsHandler } from '../shared/queue/sqs-handler';
import { startLocalTracing } from '../local/tracing';
import type { Runtime } from '../shared/runtime';
import { call } from './helpers/http';
import { pollOnce, recordOf } from './helpers/sqs';
import { newTenant } from './helpers/tenant';
import { testRt } from './helpers/runtime';
import { indexTuning } from '../shared/search/index-tuning';

/**
 * The AWS path of ingestion: the API sends to SQS (fauxqs, an SQS-compatible server), and the
 * ingestion Lambda handler (built as functions/ingestion/handler.ts builds it, over this test's
 * runtime) receives real SQS event records, reporting partial batch failures.
 */
let server: FauxqsServer;
let sqs: SQSClient;
let queueUrl: string;
let rt: Runtime;
let app: ReturnType<typeof createKnowledgeSourcesApp>;
const handler = sqsHandler<IngestionMessage>((message, delivery) => handleIngestionMessage(rt, message, delivery));

const tuned = { ...indexTuning };

beforeAll(async () => {
  // Segments of 200 chunks: a few hundred files make several batches, as a large source does.
  indexTuning.segmentChunks = 200;
  server = await startFauxqs({ port: 0, logger: false });
  const dlqArn = server.createQueue('ingestion-dlq').queueArn;
  queueUrl = server.createQueue('ingestion', {
    attributes: { VisibilityTimeout: '1', RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: String(MAX_RECEIVES) }) },
  }).queueUrl;
  sqs = new SQSClient({ endpoint: server.address, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  rt = { ...testRt, queues: { ...testRt.queues, ingestion: sqsQueue<IngestionMessage>(() => Promise.resolve(sqs), queueUrl) } };
  app = createKnowledgeSourcesApp(rt);
});

afterAll(async () => {
  Object.assign(indexTuning, tuned);
  sqs.destroy();
  await server.stop();
});

/** Runs the worker until the source settles (or `rounds` run out). */
async function work(key: string, id: string, rounds = 60) {
  for (let i = 0; i < rounds; i++) {
    const { received } = await pollOnce(sqs, queueUrl, handler);
    const status = (await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key })).body.data.status;
    if ((status === 'ready' || status === 'failed') && received === 0) return status as string;
    if (received === 0) await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error('ingestion did not settle');
}

const manyFiles = (n: number, prefix = 'note') =>
  Array.from({ length: n }, (_, i) => ({ path: `${prefix}-${String(i).padStart(4, '0')}.txt`, content: `Note ${i}\n\nThis note is about topic${i} and the shared subject.` }));

describe('ingestion through SQS', () => {
  it('indexes a collection in several batches through the queue', async () => {
    const t = await newTenant();
    const id = (await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'notes', type: 'file-collection', files: manyFiles(450) } })).body.data.id;
    expect((await call(app, 'POST', `/v1/knowledge-sources/${id}/connect`, { key: t.apiKey, body: {} })).status).toBe(202);
    expect(await work(t.apiKey, id)).toBe('ready');
    const source = (await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey })).body.data;
    expect(source.stats).toMatchObject({ documents: 450, chunks: 450 });
    const hit = await call(app, 'POST', `/v1/knowledge-sources/${id}/search`, { key: t.apiKey, body: { query: 'topic321' } });
    expect(hit.body.data.results[0].path).toBe('note-0321.txt');
  });

  it('carries the trace in message attributes: the sync and its batches are spans of the connect request', async () => {
    const traces = startLocalTracing();
    const t = await newTenant();
    const id = (await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'notes', type: 'file-collection', files: manyFiles(250, 'traced') } })).body.data.id;
    const connect = await call(app, 'POST', `/v1/knowledge-sources/${id}/connect`, { key: t.apiKey, body: {} });
    expect(await work(t.apiKey, id)).toBe('ready');
    const spans = traces.byRequestId(connect.headers.get('x-request-id')!)!.spans;
    const root = spans.find((s) => s.parentSpanId === undefined)!;
    const sync = spans.find((s) => s.name === `ingestion.sync ${id}`)!;
    expect(sync.parentSpanId).toBe(root.spanId);
    const batches = spans.filter((s) => s.name === `ingestion.batch ${id}`);
    expect(batches.length).toBeGreaterThanOrEqual(2);
    for (const batch of batches) expect(batch.parentSpanId).toBe(sync.spanId);
  });

  it('changes nothing when a batch is delivered twice, even concurrently', async () => {
    const t = await newTenant();
    const id = (await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'notes', type: 'file-collection', files: manyFiles(250) } })).body.data.id;
    await call(app, 'POST', `/v1/knowledge-sources/${id}/connect`, { key: t.apiKey, body: {} });
    // Deliver every message twice at once, as SQS may.
    const twice = async (event: Parameters<typeof handler>[0]) => {
      const [a, b] = await Promise.all([handler(event), handler(event)]);
      return { batchItemFailures: [...a.batchItemFailures, ...b.batchItemFailures] };
    };
    for (let i = 0; i < 40; i++) {
      const { received } = await pollOnce(sqs, queueUrl, twice, 1);
      if (received === 0 && (await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey })).body.data.status === 'ready') break;
    }
    const source = (await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey })).body.data;
    expect(source.status).toBe('ready');
    expect(source.stats).toMatchObject({ documents: 250, chunks: 250 });
    const res = await call(app, 'POST', `/v1/knowledge-sources/${id}/search`, { key: t.apiKey, body: { query: 'shared subject', topK: 100 } });
    const paths = res.body.data.results.map((r: { path: string }) => r.path);
    expect(new Set(paths).size).toBe(paths.length);
  });

  it('recovers from a worker crash between writing a batch and publishing it, without duplicate chunks', async () => {
    const t = await newTenant();
    const id = (await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'notes', type: 'file-collection', files: manyFiles(450, 'crash') } })).body.data.id;
    await call(app, 'POST', `/v1/knowledge-sources/${id}/connect`, { key: t.apiKey, body: {} });
    // The second batch to be sealed dies after its chunks and postings are written.
    const real = rt.store.searchIndex.sealSegment;
    let seals = 0;
    const spy = vi.spyOn(rt.store.searchIndex, 'sealSegment').mockImplementation(async (...args) => {
      if (++seals === 2) throw new Error('worker crashed');
      return real(...args);
    });
    try {
      expect(await work(t.apiKey, id)).toBe('ready');
    } finally {
      spy.mockRestore();
    }
    expect(seals).toBeGreaterThanOrEqual(4); // three batches, one of them twice
    const source = (await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey })).body.data;
    expect(source.stats).toMatchObject({ documents: 450, chunks: 450 });
  });

  it('replaces every changed document exactly once when a re-sync crashes before a seal and after another seal', async () => {
    const t = await newTenant();
    const id = (await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'notes', type: 'file-collection', files: manyFiles(450, 'old') } })).body.data.id;
    await call(app, 'POST', `/v1/knowledge-sources/${id}/connect`, { key: t.apiKey, body: {} });
    expect(await work(t.apiKey, id)).toBe('ready');
    // Every file changes: each batch's documents replace chunks of the first sync's segments.
    const changed = manyFiles(450, 'old').map((f, i) => ({ ...f, content: `Note ${i}\n\nRewritten: now about renamed${i} and another matter.` }));
    expect((await call(app, 'POST', `/v1/knowledge-sources/${id}/files`, { key: t.apiKey, body: { files: changed } })).status).toBe(200);
    // One batch dies after writing its chunks and documents, before sealing; another after sealing, before tombstoning what it replaces.
    const seal = rt.store.searchIndex.sealSegment;
    const tombstone = rt.store.searchIndex.tombstone;
    let seals = 0;
    let tombstones = 0;
    const spies = [
      vi.spyOn(rt.store.searchIndex, 'sealSegment').mockImplementation(async (...args) => {
        if (++seals === 1) throw new Error('worker crashed before sealing');
        return seal(...args);
      }),
      vi.spyOn(rt.store.searchIndex, 'tombstone').mockImplementation(async (...args) => {
        if (args[2].length > 0 && ++tombstones === 2) throw new Error('worker crashed before tombstoning');
        return tombstone(...args);
      }),
    ];
    try {
      expect(await work(t.apiKey, id)).toBe('ready');
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    const source = (await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey })).body.data;
    expect(source.stats).toMatchObject({ documents: 450, chunks: 450 });
    // No old version is left searchable, and each new one is found once.
    const old = await call(app, 'POST', `/v1/knowledge-sources/${id}/search`, { key: t.apiKey, body: { query: 'shared subject', topK: 100, feedback: false } });
    expect(old.body.data.results).toEqual([]);
    const renamed = await call(app, 'POST', `/v1/knowledge-sources/${id}/search`, { key: t.apiKey, body: { query: 'another matter', topK: 100, feedback: false } });
    const paths = renamed.body.data.results.map((r: { path: string }) => r.path);
    expect(paths).toHaveLength(100);
    expect(new Set(paths).size).toBe(100);
    for (const n of ['0007', '0321', '0449']) {
      const hit = await call(app, 'POST', `/v1/knowledge-sources/${id}/search`, { key: t.apiKey, body: { query: `renamed${Number(n)}`, feedback: false } });
      expect(hit.body.data.results.map((r: { path: string }) => r.path)).toEqual([`old-${n}.txt`]);
    }
    // Both crashes happened, and were redone: three batches, two of them twice.
    expect(seals).toBeGreaterThanOrEqual(4);
    expect(tombstones).toBeGreaterThanOrEqual(4);
  });

  it('sends poison messages to the dead-letter queue and marks a repeatedly failing source failed', async () => {
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'not json at all' }));
    for (let i = 0; i < MAX_RECEIVES + 2; i++) {
      await pollOnce(sqs, queueUrl, handler);
      await new Promise((r) => setTimeout(r, 1100));
    }
    expect(server.inspectQueue('ingestion-dlq')!.messages.ready.map((m) => m.body)).toContain('not json at all');

    const t = await newTenant();
    const id = (await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'notes', type: 'file-collection', files: manyFiles(3) } })).body.data.id;
    const source = (await call(app, 'POST', `/v1/knowledge-sources/${id}/connect`, { key: t.apiKey, body: {} })).body.data;
    // The last allowed delivery of a sync that keeps failing: the source must not stay pending.
    const spy = vi.spyOn(rt.store.searchIndex, 'listDocuments').mockRejectedValue(new Error('disk on fire'));
    try {
      const message = { type: 'sync', tenantId: t.scope.tenantId, sourceId: id, syncId: source.syncId };
      const result = await handler({ Records: [recordOf({ MessageId: 'm-1', ReceiptHandle: 'r-1', Body: JSON.stringify(message) }, MAX_RECEIVES)] });
      expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'm-1' }]);
    } finally {
      spy.mockRestore();
    }
    const failed = (await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey })).body.data;
    expect(failed.status).toBe('failed');
    expect(failed.error.code).toBe('INTERNAL_ERROR');
    expect(failed.error.message).not.toContain('disk on fire');
  }, 30_000);
});
