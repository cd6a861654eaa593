import { createHash } from 'node:crypto';
import type pg from 'pg';
import { connect, inspectTable, listKeys, readOnly, readRows, rowToDocument, type PgCredentials, type TableShape } from '../connectors/postgres';
import { SQSClient } from '@aws-sdk/client-sqs';
import { config } from '../config';
import { AppError } from '../errors';
import { sqsQueue } from '../queue/sqs-queue';
import { errorFields, log } from '../log';
import type { Delivery, Queue } from '../queue/queue';
import { chunkBlocks, DEFAULT_CHUNK_OPTIONS } from '../search/chunker';
import { extract, type Block } from '../search/extract';
import { allTerms, analyzeChunk } from '../search/indexing';
import { getFiles, listFiles, readFileContent } from '../store/files';
import { getRecord, updateRecord } from '../store/records';
import {
  beginSegment,
  claimSync,
  deleteDocuments,
  getDocuments,
  getSync,
  listDocuments,
  markBatchDone,
  markSyncSent,
  purgeIndex,
  readSegments,
  reserveSegments,
  saveSyncPlan,
  sealSegment,
  SEGMENT_SPAN,
  tombstone,
  writeDocuments,
  writeSegmentData,
  type AnalyzedChunkRecord,
  type DocumentRecord,
} from '../store/search-index';
import { scopeOf, type TenantScope } from '../tenancy';
import type { KnowledgeSourceRecord } from './knowledge-sources';
import { loadCredentials } from './source-credentials';

/**
 * Ingestion through the ingestion queue. A `sync` message plans the work (which documents are new
 * or changed) and fans it out as `batch` messages; each batch reads its documents, indexes them
 * as one segment and, when it is the last to finish, finalises the sync (deletions, statistics,
 * status `ready`). Every step is idempotent, so redelivery and crashes between batches are safe.
 */
export type IngestionMessage =
  | { type: 'sync'; tenantId: string; sourceId: string; syncId: string }
  | {
      type: 'batch';
      tenantId: string;
      sourceId: string;
      syncId: string;
      batch: number;
      segNo: number;
      paths?: string[];
      range?: { after?: string; upTo: string };
      since?: string;
    }
  | { type: 'purge'; tenantId: string; sourceId: string };

/** Documents a batch reads at most: bounds a worker's memory and an SQS message's size. */
export const FILES_PER_BATCH = 200;
export const ROWS_PER_BATCH = 500;
const BYTES_PER_BATCH = 4 * 1024 * 1024;

interface SourceDocument {
  key: string;
  hash: string;
  title?: string;
  blocks: Block[];
  metadata?: Record<string, unknown>;
}

let queue: Queue<IngestionMessage> | undefined;

/** The queue ingestion work goes to (SQS in AWS, the local queue in local mode). */
export function useIngestionQueue(q: Queue<IngestionMessage>): void {
  queue = q;
}

/** In AWS the SQS queue named by INGESTION_QUEUE_URL; local mode sets its own. */
export function ingestionQueue(): Queue<IngestionMessage> {
  if (queue) return queue;
  if (!config.ingestionQueueUrl) throw new Error('No ingestion queue: set INGESTION_QUEUE_URL (AWS) or start in local mode');
  const client = new SQSClient({ region: config.region, ...(config.sqsEndpoint ? { endpoint: config.sqsEndpoint } : {}) });
  return (queue = sqsQueue(client, config.ingestionQueueUrl));
}

const documentIdOf = (sourceId: string, key: string) =>
  `doc_${createHash('sha256').update(`${sourceId}\u0000${key}`).digest('hex').slice(0, 26)}`;

const PHASE: Record<string, number> = { created: 0, pending: 1, syncing: 2, indexing: 3, ready: 4, failed: 4 };

function setStatus(scope: TenantScope, sourceId: string, change: Partial<KnowledgeSourceRecord>, syncId?: string) {
  return updateRecord<KnowledgeSourceRecord>(scope, 'KS', sourceId, (current) => {
    // A newer sync owns the status: an old message must not overwrite it.
    if (syncId && current.syncId !== syncId) return current;
    // Within a sync the status only moves forward (a late duplicate cannot undo 'ready').
    if (change.status && PHASE[change.status]! < PHASE[current.status]!) return current;
    const next = { ...current, ...change };
    if (change.status && change.status !== 'failed') delete next.error;
    return next;
  });
}

async function withPostgres<T>(scope: TenantScope, source: KnowledgeSourceRecord, fn: (client: pg.Client, shape: TableShape) => Promise<T>): Promise<T> {
  const credentials: PgCredentials | undefined = await loadCredentials(scope, source.id);
  if (!credentials) throw new AppError('INVALID_REQUEST', 'No stored credentials: connect the source again', { field: 'credentials' });
  const client = await connect(source.config!, credentials);
  try {
    return await readOnly(client, async () => fn(client, await inspectTable(client, source.config!)));
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function plan(scope: TenantScope, source: KnowledgeSourceRecord, syncId: string) {
  const batches: Array<Omit<Extract<IngestionMessage, { type: 'batch' }>, 'segNo' | 'batch'>> = [];
  const base = { type: 'batch' as const, tenantId: scope.tenantId, sourceId: source.id, syncId };
  let watermark: string | undefined;
  if (source.type === 'file-collection') {
    const [files, documents] = await Promise.all([listFiles(scope, source.id), listDocuments(scope, source.id)]);
    const indexed = new Map(documents.map((d) => [d.documentKey, d.hash]));
    const changed = files.filter((f) => indexed.get(f.path) !== f.sha256).sort((a, b) => (a.path < b.path ? -1 : 1));
    let current: string[] = [];
    let bytes = 0;
    for (const file of changed) {
      if (current.length >= FILES_PER_BATCH || (bytes + file.size > BYTES_PER_BATCH && current.length > 0)) {
        batches.push({ ...base, paths: current });
        current = [];
        bytes = 0;
      }
      current.push(file.path);
      bytes += file.size;
    }
    if (current.length > 0) batches.push({ ...base, paths: current });
  } else {
    const since = source.config?.updatedAtColumn ? source.watermark : undefined;
    const keys = await withPostgres(scope, source, async (client, shape) => {
      watermark = String((await client.query<{ now: Date }>('SELECT now() AS now')).rows[0]!.now.toISOString());
      return listKeys(client, shape, since);
    });
    for (let i = 0; i < keys.length; i += ROWS_PER_BATCH) {
      const group = keys.slice(i, i + ROWS_PER_BATCH);
      batches.push({ ...base, range: { after: i === 0 ? undefined : keys[i - 1], upTo: group[group.length - 1]! }, since });
    }
  }
  return { batches, watermark };
}

/** How long one delivery of a sync message owns its planning before a redelivery may take over. */
const PLANNING_LEASE_MS = 5 * 60_000;

async function handleSync(scope: TenantScope, source: KnowledgeSourceRecord, syncId: string) {
  // Exactly one delivery plans: a duplicate delivered at the same time, or a redelivery once the
  // batches are out, has nothing to do.
  if (!(await claimSync(scope, source.id, syncId, PLANNING_LEASE_MS))) return;
  await setStatus(scope, source.id, { status: 'syncing' }, syncId);
  const startedAt = new Date().toISOString();
  const { batches, watermark } = await plan(scope, source, syncId);
  // A fresh range of segments for each planning attempt: numbers left unused by a crash are harmless.
  const segBase = await reserveSegments(scope, source.id, Math.max(1, batches.length));
  await saveSyncPlan(scope, source.id, { syncId, total: batches.length, startedAt, watermark, segBase });
  await setStatus(scope, source.id, { status: 'indexing' }, syncId);
  await ingestionQueue().send(batches.map((b, i) => ({ ...b, batch: i, segNo: segBase + i })));
  await markSyncSent(scope, source.id, syncId);
  if (batches.length === 0) await finalize(scope, source, syncId);
}

async function readDocuments(scope: TenantScope, source: KnowledgeSourceRecord, message: Extract<IngestionMessage, { type: 'batch' }>): Promise<SourceDocument[]> {
  if (source.type === 'file-collection') {
    const files = await getFiles(scope, source.id, message.paths ?? []);
    return Promise.all(
      files.map(async (file) => {
        const { title, blocks } = extract(file.path, await readFileContent(scope, source.id, file));
        return { key: file.path, hash: file.sha256, title: title ?? file.path, blocks, metadata: { contentType: file.contentType } };
      }),
    );
  }
  return withPostgres(scope, source, async (client, shape) => {
    const rows = await readRows(client, shape, message.range!, message.since);
    return rows.map((row) => rowToDocument(row, shape));
  });
}

async function handleBatch(scope: TenantScope, source: KnowledgeSourceRecord, message: Extract<IngestionMessage, { type: 'batch' }>) {
  const { segNo, syncId } = message;
  const documents = await readDocuments(scope, source, message);
  const previous = await getDocuments(scope, source.id, documents.map((d) => d.key));
  const changed = documents.filter((d) => previous.get(d.key)?.hash !== d.hash);
  const segment = await beginSegment(scope, source.id, {
    segNo,
    syncId,
    replaces: changed.flatMap((d) => previous.get(d.key)?.chunks ?? []),
    documentKeys: changed.map((d) => d.key),
  });
  if (segment.state !== 'live') {
    // A redelivered batch redoes exactly the documents its segment began with.
    const byKey = new Map(documents.map((d) => [d.key, d]));
    const chunks: AnalyzedChunkRecord[] = [];
    const records: DocumentRecord[] = [];
    let lenBody = 0;
    let lenTitle = 0;
    for (const key of segment.documentKeys) {
      const doc = byKey.get(key);
      if (!doc) continue; // gone since: the sync's deletions take care of it
      const documentId = documentIdOf(source.id, key);
      const refs = [];
      for (const chunk of chunkBlocks(doc.title, doc.blocks, source.chunking ?? DEFAULT_CHUNK_OPTIONS)) {
        const docNo = segNo * SEGMENT_SPAN + chunks.length;
        const analyzed = analyzeChunk(chunk);
        const terms = [...allTerms(analyzed)].map(([t, n]) => `${t}:${n}`).join(' ');
        chunks.push({
          docNo,
          chunkId: `chk_${docNo.toString(36)}`,
          documentId,
          documentKey: key,
          title: chunk.title,
          text: chunk.text,
          metadata: doc.metadata,
          terms,
          lenBody: analyzed.lenBody,
          lenTitle: analyzed.lenTitle,
          titleTf: analyzed.titleTf,
          bodyTf: analyzed.bodyTf,
        });
        refs.push({ docNo, lenBody: analyzed.lenBody, lenTitle: analyzed.lenTitle });
        lenBody += analyzed.lenBody;
        lenTitle += analyzed.lenTitle;
      }
      records.push({ documentKey: key, documentId, hash: doc.hash, chunks: refs });
    }
    await writeSegmentData(scope, source.id, segNo, chunks);
    await writeDocuments(scope, source.id, records);
    await sealSegment(scope, source.id, segNo, { chunks: chunks.length, lenBody, lenTitle });
  }
  await tombstone(scope, source.id, segment.replaces);
  const progress = await markBatchDone(scope, source.id, syncId, message.batch);
  if (progress.done >= progress.total) await finalize(scope, source, syncId);
}

/** Deletions, statistics and status `ready`. Safe to run more than once. */
async function finalize(scope: TenantScope, source: KnowledgeSourceRecord, syncId: string) {
  const sync = await getSync(scope, source.id, syncId);
  const current = new Set(
    source.type === 'file-collection'
      ? (await listFiles(scope, source.id)).map((f) => f.path)
      : await withPostgres(scope, source, (client, shape) => listKeys(client, shape)),
  );
  const documents = await listDocuments(scope, source.id);
  const gone = documents.filter((d) => !current.has(d.documentKey));
  await tombstone(scope, source.id, gone.flatMap((d) => d.chunks));
  await deleteDocuments(scope, source.id, gone.map((d) => d.documentKey));
  const segments = await readSegments(scope, source.id);
  const chunks = segments.filter((s) => s.state === 'live').reduce((n, s) => n + s.chunks - s.deletedCount, 0);
  const startedAt = sync?.startedAt ?? new Date().toISOString();
  await setStatus(
    scope,
    source.id,
    {
      status: 'ready',
      stats: {
        documents: documents.length - gone.length,
        chunks,
        lastSyncedAt: new Date().toISOString(),
        durationMs: Date.now() - Date.parse(startedAt),
      },
      watermark: sync?.watermark ?? source.watermark,
    },
    syncId,
  );
  log.info('knowledge source ready', { tenantId: scope.tenantId, sourceId: source.id, syncId, chunks });
}

/** Errors that no retry will fix: the source is marked failed at once. */
function isPermanent(error: unknown): boolean {
  return error instanceof AppError && error.statusCode < 500;
}

export async function handleIngestionMessage(message: IngestionMessage, delivery: Delivery): Promise<void> {
  const scope = scopeOf(message.tenantId);
  if (message.type === 'purge') {
    await purgeIndex(scope, message.sourceId);
    return;
  }
  const source = await getRecord<KnowledgeSourceRecord>(scope, 'KS', message.sourceId);
  if (!source || source.syncId !== message.syncId) return; // deleted, or superseded by a newer sync
  try {
    if (message.type === 'sync') await handleSync(scope, source, message.syncId);
    else await handleBatch(scope, source, message);
  } catch (error) {
    const last = delivery.receiveCount >= delivery.maxReceives;
    if (isPermanent(error) || last) {
      const appError = error instanceof AppError ? error : new AppError('INTERNAL_ERROR', 'Ingestion failed repeatedly');
      log.error('ingestion failed', { sourceId: source.id, syncId: message.syncId, ...errorFields(error) });
      await setStatus(scope, source.id, { status: 'failed', error: { code: appError.code, message: appError.message } }, message.syncId);
      if (isPermanent(error)) return; // retrying cannot help: acknowledge
    }
    throw error;
  }
}
