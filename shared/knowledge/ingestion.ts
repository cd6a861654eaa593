import { inSpan, SpanKind } from '../telemetry';
import type pg from 'pg';
import { connect, inspectTable, listKeys, listKeySizes, readOnly, readRows, rowToDocument, type PgCredentials, type TableShape } from './connectors/postgres';
import { config } from '../config';
import { AppError, isRetryable, DocumentError, BlobTooLargeError } from '../errors';
import { errorFields, log } from '../log';
import type { IngestionMessage } from '../queue/messages';
import type { Delivery } from '../queue/queue';
import { chunkBlocks, DEFAULT_CHUNK_OPTIONS } from '../search/chunker';
import type { Block } from '../search/extract';
import { parseIsolated } from './documents/parse-isolated';
import { allTerms, analyzeChunk } from '../search/indexing';
import { layoutTerm } from '../search/impact-blocks';
import { SEGMENT_SPAN, type AnalyzedChunkRecord, type ChunkRef, type DocumentRecord } from '../store/search-index';
import { indexTuning } from '../search/index-tuning';
import { withDynamoCounters } from '../store/request-metrics';
import { scopeOf, type TenantScope } from '../tenancy';
import { knowledgeSources, pgConfigOf, type KnowledgeSourceRecord } from './sources';
import { loadCredentials } from './source-credentials';
import type { Runtime, RuntimeWith } from '../runtime';
import { checkBackSeconds, whileLeased } from '../queue/work-lease';
import { compactIfNeeded, compactionActive, handleCompaction } from './compaction';
import { recordUsage } from '../usage';
import { embedAll, embeddingModelOf, embeddingText, quantize, vectorModelKey } from '../search/hybrid';
import { eachLimited } from '../each-limited';
import { deleteAllFiles, readFileBytes } from './file-contents';
import { readS3Object, refreshS3Entries } from './s3-source';
import { refreshWebEntries } from './web-source';
import { MAX_FILE_BYTES } from './source-limits';
import type { StoredFile } from '../store/files';
import { accessBuilder, canonicalAccess, type AccessList } from '../store/segment-access';
import { hashWithAccess } from './access-lists';
import { documentIdOf } from './document-ids';
import { isoNow } from '../clock';

/**
 * Ingestion through the ingestion queue. A `sync` message plans the work (which documents are new
 * or changed) and fans it out as `batch` messages; each batch reads its documents, indexes them
 * as one segment and, when it is the last to finish, finalises the sync (deletions, statistics,
 * status `ready`). Every step is idempotent, so redelivery and crashes between batches are safe.
 */

/**
 * A sync's segments are sized from what it will write, so an initial sync ends in few large
 * segments (each written once: no compaction to follow) and a small change in one small segment.
 * A segment takes up to `indexTuning.segmentChunks` chunks, estimated from the rows' or files' bytes;
 * its worker reads it in pages, and writes each page's chunks while it reads the next.
 */
const ROWS_PER_PAGE = 500;
const FILES_PER_PAGE = 200;
const BYTES_PER_PAGE = 4 * 1024 * 1024;
/** Characters of text a chunk holds on average (about 1,500 with 200 of overlap): estimates chunks from bytes. */
const BYTES_PER_CHUNK = 1_300;
/** A file segment's paths travel in its message (SQS takes 256 KB): at most this many characters of them. */
const PATH_CHARS_PER_SEGMENT = 100_000;
/** A file segment's bytes at most: bounds one worker's parsing time whatever the files. */
const BYTES_PER_SEGMENT = 64 * 1024 * 1024;

/** Chunks a document of `bytes` bytes of text makes, about (at least one). */
const estimatedChunks = (bytes: number) => 1 + Math.floor(bytes / BYTES_PER_CHUNK);

/** One measure a group of items is kept under: each item's share of it, and the group's most. */
export interface GroupLimit<T> {
  of: (item: T) => number;
  max: number;
}

/**
 * Cuts items (in order) into consecutive groups, each filled before the next begins, a group ending
 * where the next item would take any measure past its limit (an item past a limit alone is a
 * group of its own). Segments are cut so (a full segment packs a term's postings into fewer blocks
 * than two half ones, so searches read less), and a segment's files into pages.
 */
export function cutGroups<T>(items: T[], limits: Array<GroupLimit<T>>): T[][] {
  const groups: T[][] = [];
  let group: T[] = [];
  const sums = limits.map(() => 0);
  for (const item of items) {
    const shares = limits.map((limit) => limit.of(item));
    if (group.length > 0 && limits.some((limit, i) => sums[i]! + shares[i]! > limit.max)) {
      groups.push(group);
      group = [];
      sums.fill(0);
    }
    group.push(item);
    shares.forEach((share, i) => (sums[i]! += share));
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

interface SourceDocument {
  key: string;
  hash: string;
  title?: string;
  blocks: Block[];
  metadata?: Record<string, unknown>;
  /** Who may read it (none: the source's mode decides); part of `hash`, so a changed list is indexed again. */
  access?: AccessList;
}


const PHASE: Record<string, number> = { created: 0, pending: 1, syncing: 2, indexing: 3, ready: 4, failed: 4 };

/** Sets a sync's status (see its rules below); a sync that ended leaves the sweeper's list. */
export async function setStatus(rt: Runtime, scope: TenantScope, sourceId: string, change: Partial<KnowledgeSourceRecord>, syncId?: string) {
  const updated = await knowledgeSources.update(rt, scope, sourceId, (current) => {
    // A newer sync owns the status: an old message must not overwrite it.
    if (syncId && current.syncId !== syncId) return current;
    // Within a sync the status only moves forward (a late duplicate cannot undo 'ready').
    if (change.status && PHASE[change.status]! < PHASE[current.status]!) return current;
    const next = { ...current, ...change };
    if (change.status && change.status !== 'failed') delete next.error;
    return next;
  });
  if (syncId && (change.status === 'ready' || change.status === 'failed')) {
    await rt.store.unfinishedWork.remove({ kind: 'sync', tenantId: scope.tenantId, id: sourceId, syncId });
  }
  return updated;
}

async function withPostgres<T>(rt: Runtime, scope: TenantScope, source: KnowledgeSourceRecord, fn: (client: pg.Client, shape: TableShape) => Promise<T>): Promise<T> {
  const credentials: PgCredentials | undefined = await loadCredentials(rt, scope, source.id);
  if (!credentials) throw new AppError('INVALID_REQUEST', 'No stored credentials: connect the source again', { field: 'credentials' });
  const client = await connect(pgConfigOf(source), credentials, rt.outbound);
  try {
    return await readOnly(client, async () => fn(client, await inspectTable(client, pgConfigOf(source))));
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function plan(rt: Runtime, scope: TenantScope, source: KnowledgeSourceRecord, syncId: string) {
  const batches: Array<Omit<Extract<IngestionMessage, { type: 'batch' }>, 'segNo' | 'batch'>> = [];
  const base = { type: 'batch' as const, tenantId: scope.tenantId, sourceId: source.id, syncId };
  let watermark: string | undefined;
  if (source.type !== 'postgresql') {
    // An s3 or web source first brings its entries in line with the origin; then all three plan alike.
    if (source.type === 's3') await refreshS3Entries(rt, scope, source);
    if (source.type === 'web') await refreshWebEntries(rt, scope, source);
    const [files, documents, segmentList] = await Promise.all([rt.store.files.listFiles(scope, source.id), rt.store.searchIndex.listDocuments(scope, source.id), rt.store.searchIndex.readSegments(scope, source.id)]);
    // A document counts as indexed only once its segment is live: one recorded by a batch that died
    // before sealing its segment is planned again, so a sync planned anew after a crash cannot end
    // ready while that batch is still to be redone.
    const live = new Set(segmentList.filter((s) => s.state === 'live').map((s) => s.segNo));
    const indexed = new Map(documents.filter((d) => d.seg === undefined || live.has(d.seg)).map((d) => [d.documentKey, d.hash]));
    const changed = files.filter((f) => indexed.get(f.path) !== f.sha256).sort((a, b) => (a.path < b.path ? -1 : 1));
    const segments = cutGroups(changed, [
      { of: (f) => estimatedChunks(f.size), max: indexTuning.segmentChunks },
      { of: (f) => f.path.length, max: PATH_CHARS_PER_SEGMENT },
      { of: (f) => f.size, max: BYTES_PER_SEGMENT },
    ]);
    for (const group of segments) batches.push({ ...base, paths: group.map((f) => f.path) });
  } else {
    const since = pgConfigOf(source).updatedAtColumn ? source.watermark : undefined;
    const rows = await withPostgres(rt, scope, source, async (client, shape) => {
      watermark = String((await client.query<{ now: Date }>('SELECT now() AS now')).rows[0]!.now.toISOString());
      return listKeySizes(client, shape, since);
    });
    let after: string | undefined;
    for (const group of cutGroups(rows, [{ of: (row) => estimatedChunks(row.bytes), max: indexTuning.segmentChunks }])) {
      const upTo = group[group.length - 1]!.key;
      batches.push({ ...base, range: { after, upTo }, since });
      after = upTo;
    }
  }
  return { batches, watermark };
}

async function handleSync(rt: Runtime, scope: TenantScope, source: KnowledgeSourceRecord, syncId: string) {
  // A compaction is merging the segments this sync would tombstone in: look again once it is done.
  if (compactionActive(source, rt.clock.now())) {
    await rt.queues.ingestion.send([{ type: 'sync', tenantId: scope.tenantId, sourceId: source.id, syncId }], { delaySeconds: 5 });
    return;
  }
  // Exactly one delivery plans: a duplicate delivered at the same time, or a redelivery once the
  // batches are out, has nothing to do.
  if (!(await rt.store.syncLedger.claimSync(scope, source.id, syncId, config.workLeaseMs))) {
    // Another delivery plans it. If that worker died, its lease runs out: look again just after.
    const sync = await rt.store.syncLedger.getSync(scope, source.id, syncId);
    const now = rt.clock.now();
    if (sync && !sync.sent && sync.leaseUntil !== undefined && sync.leaseUntil > now) {
      await rt.queues.ingestion.send([{ type: 'sync', tenantId: scope.tenantId, sourceId: source.id, syncId }], { delaySeconds: checkBackSeconds(sync.leaseUntil, now) });
    }
    return;
  }
  await setStatus(rt, scope, source.id, { status: 'syncing' }, syncId);
  const startedAt = isoNow(rt.clock);
  const { batches, watermark } = await whileLeased(
    () => rt.store.syncLedger.renewSyncLease(scope, source.id, syncId, config.workLeaseMs),
    () => plan(rt, scope, source, syncId),
  );
  // A fresh range of segments for each planning attempt: numbers left unused by a crash are harmless.
  const segBase = await rt.store.searchIndex.reserveSegments(scope, source.id, Math.max(1, batches.length));
  await rt.store.syncLedger.saveSyncPlan(scope, source.id, { syncId, total: batches.length, startedAt, watermark, segBase });
  await setStatus(rt, scope, source.id, { status: 'indexing' }, syncId);
  await rt.queues.ingestion.send(batches.map((b, i) => ({ ...b, batch: i, segNo: segBase + i })));
  await rt.store.syncLedger.markSyncSent(scope, source.id, syncId);
  if (batches.length === 0) await finalize(rt, scope, source, syncId);
}

/**
 * Files (or objects) read and parsed at once. A page holds at most 4 MB of files (a larger file is
 * alone in its page), so this bounds round trips, not memory.
 */
const PARSE_CONCURRENCY = 16;

/**
 * Hands a segment's documents to `take` a page at a time, in key order, reading the next page
 * while `take` works on this one. Postgres rows come by keyset pagination within the segment's
 * range; files in pages of at most 200 files or 4 MB.
 */
async function eachDocumentPage(
  rt: Runtime,
  scope: TenantScope,
  source: KnowledgeSourceRecord,
  message: Extract<IngestionMessage, { type: 'batch' }>,
  take: (page: SourceDocument[]) => Promise<void>,
): Promise<void> {
  if (source.type === 'postgresql') {
    const range = message.range!;
    return withPostgres(rt, scope, source, (client, shape) => {
      type Page = Awaited<ReturnType<typeof readRows>>;
      const read = (after: string | undefined) => readRows(client, shape, { after, upTo: range.upTo }, message.since, ROWS_PER_PAGE);
      return eachReadAhead<Page>(
        (index, previous) => (index === 0 ? read(range.after) : previous!.rows.length === ROWS_PER_PAGE ? read(previous!.last) : undefined),
        (page) => take(page.rows.map((row) => rowToDocument(row, shape))),
      );
    });
  }
  const files = (await rt.store.files.getFiles(scope, source.id, message.paths ?? [])).sort((a, b) => (a.path < b.path ? -1 : 1));
  const pages = cutGroups(files, [
    { of: () => 1, max: FILES_PER_PAGE },
    { of: (f) => f.size, max: BYTES_PER_PAGE },
  ]);
  return eachReadAhead((index) => (index < pages.length ? readFiles(rt, scope, source, pages[index]!) : undefined), take);
}

/**
 * Hands each page to `take` in turn while the next is read: `read(index, previous)` starts reading
 * page `index` (the one after `previous`), or gives undefined after the last.
 */
async function eachReadAhead<P>(read: (index: number, previous?: P) => Promise<P> | undefined, take: (page: P) => Promise<void>): Promise<void> {
  let next = read(0);
  for (let index = 1; next; index++) {
    const page = await next;
    next = read(index, page);
    // A page read ahead whose turn never comes (the batch failed) must not be an unhandled rejection.
    next?.catch(() => undefined);
    await take(page);
  }
}

/**
 * Files as documents. A file that cannot be read (damaged, encrypted, scanned, too large) becomes
 * a document without text, so the version it replaced leaves the index, and its error is recorded
 * on the file; the rest of the batch goes on.
 */
async function readFiles(rt: Runtime, scope: TenantScope, source: KnowledgeSourceRecord, files: StoredFile[]): Promise<SourceDocument[]> {
  const documents = new Map<string, SourceDocument>();
  await eachLimited(files, PARSE_CONCURRENCY, async (file) => {
    const base = { key: file.path, hash: hashWithAccess(file.sha256, file.access), metadata: { contentType: file.contentType }, ...(file.access ? { access: file.access } : {}) };
    try {
      const bytes = await readSourceFile(rt, scope, source, file);
      const { title, blocks } = await parseIsolated({ path: file.path, contentType: file.contentType, bytes }, { mainContent: source.type === 'web' });
      documents.set(file.path, { ...base, title: title ?? file.path, blocks });
      if (file.error) await rt.store.files.setFileError(scope, source.id, file.path, file.sha256, undefined);
    } catch (error) {
      const reason = unreadable(error);
      if (!reason) throw error;
      log.warn('file not indexed', { tenantId: scope.tenantId, sourceId: source.id, path: file.path, ...reason });
      documents.set(file.path, { ...base, blocks: [] });
      await rt.store.files.setFileError(scope, source.id, file.path, file.sha256, reason);
    }
  });
  return files.map((f) => documents.get(f.path)!);
}

/** The bytes of a source's file: a collection's or a crawled page's from the files bucket, an `s3` source's object from its bucket. */
function readSourceFile(rt: Runtime, scope: TenantScope, source: KnowledgeSourceRecord, file: StoredFile): Promise<Uint8Array> {
  return source.type === 's3' ? readS3Object(rt, source, file, MAX_FILE_BYTES) : readFileBytes(rt, scope, source.id, file, MAX_FILE_BYTES);
}

/** Why a file cannot be indexed, when no retry would change it. */
function unreadable(error: unknown): { code: string; message: string } | undefined {
  if (error instanceof DocumentError) return { code: error.code, message: error.message };
  if (error instanceof BlobTooLargeError) return { code: 'DOCUMENT_TOO_LARGE', message: `The file has ${error.size} bytes; at most ${error.limit} are read` };
  return undefined;
}

async function handleBatch(rt: Runtime, scope: TenantScope, source: KnowledgeSourceRecord, message: Extract<IngestionMessage, { type: 'batch' }>) {
  const { segNo, syncId } = message;
  // Done already (a late duplicate): its segment may have been compacted away since, so redoing it would index its documents twice.
  if ((await rt.store.syncLedger.getSync(scope, source.id, syncId))?.done.includes(segNo)) return;
  const segment = await rt.store.searchIndex.beginSegment(scope, source.id, { segNo, syncId });
  let replaced: ChunkRef[];
  if (segment.state !== 'live') {
    const { result, counters } = withDynamoCounters(() => indexSegment(rt, scope, source, message));
    const indexed = await result;
    replaced = indexed.replaced;
    // Counted when the segment is sealed: a redelivery that finds it live does not count it again.
    await recordUsage(rt, scope, { subject: { kind: 'knowledge-source', id: source.id }, bytesIngested: indexed.bytes, writeUnits: counters.writeUnits });
  } else {
    // Sealed by a delivery that died before it tombstoned what the segment replaces: its documents say what.
    const documents = await rt.store.searchIndex.listDocuments(scope, source.id);
    replaced = documents.filter((d) => d.seg === segNo).flatMap((d) => d.replaced ?? []);
  }
  await rt.store.searchIndex.tombstone(scope, source.id, [...replaced, ...(segment.replaces ?? [])]);
  const progress = await rt.store.syncLedger.markBatchDone(scope, source.id, syncId, segNo);
  if (progress.done >= progress.total) await finalize(rt, scope, source, syncId);
}

/**
 * Writes and seals one segment: the documents of its range or paths that are new or changed, and
 * those an earlier delivery of it already recorded as its own (their hash no longer looks
 * changed). Returns the bytes of text it indexed and the chunks its documents replace.
 */
async function indexSegment(rt: Runtime, scope: TenantScope, source: KnowledgeSourceRecord, message: Extract<IngestionMessage, { type: 'batch' }>) {
  const { segNo } = message;
  const writer = rt.store.searchIndex.segmentWriter(scope, source.id, segNo, layoutTerm);
  const live = new Set((await rt.store.searchIndex.readSegments(scope, source.id)).filter((s) => s.state === 'live').map((s) => s.segNo));
  const replaced: ChunkRef[] = [];
  const access = accessBuilder();
  let position = 0;
  let bytes = 0;
  // One page's writes stay in flight while the next page is read and analysed.
  let writing: Promise<void> = Promise.resolve();
  try {
    await eachDocumentPage(rt, scope, source, message, async (page) => {
      const previous = await rt.store.searchIndex.getDocuments(scope, source.id, page.map((d) => d.key));
      const chunks: AnalyzedChunkRecord[] = [];
      const records: DocumentRecord[] = [];
      for (const doc of page) {
        const before = previous.get(doc.key);
        // Indexed already by another segment, if that segment is live (one a dead batch never sealed does not count).
        if (before && before.hash === doc.hash && before.seg !== segNo && (before.seg === undefined || live.has(before.seg))) continue;
        const replaces = before?.seg === segNo ? (before.replaced ?? []) : (before?.chunks ?? []);
        replaced.push(...replaces);
        for (const block of doc.blocks) bytes += Buffer.byteLength(block.text);
        const documentId = documentIdOf(source.id, doc.key);
        const refs = [];
        for (const chunk of chunkBlocks(doc.title, doc.blocks, source.chunking ?? DEFAULT_CHUNK_OPTIONS)) {
          const docNo = segNo * SEGMENT_SPAN + position++;
          const analyzed = analyzeChunk(chunk);
          chunks.push({
            docNo,
            chunkId: `chk_${docNo.toString(36)}`,
            documentId,
            documentKey: doc.key,
            title: chunk.title,
            text: chunk.text,
            metadata: doc.metadata,
            ...(chunk.location ? { location: chunk.location } : {}),
            terms: [...allTerms(analyzed)].map(([t, n]) => `${t}:${n}`).join(' '),
            lenBody: analyzed.lenBody,
            lenTitle: analyzed.lenTitle,
            titleTf: analyzed.titleTf,
            bodyTf: analyzed.bodyTf,
          });
          refs.push({ docNo, lenBody: analyzed.lenBody, lenTitle: analyzed.lenTitle });
        }
        access.add(refs.length, doc.access);
        records.push({ documentKey: doc.key, documentId, hash: doc.hash, chunks: refs, seg: segNo, replaced: replaces, ...(doc.access ? { access: canonicalAccess(doc.access) } : {}) });
      }
      if (source.embedding) await embedChunks(rt, scope, source, chunks);
      await writing;
      // Chunks and documents at once: neither is seen before the segment is sealed, and a redone segment rewrites both.
      writing = Promise.all([writer.add(chunks), rt.store.searchIndex.writeDocuments(scope, source.id, records)]).then(() => undefined);
    });
  } finally {
    await writing;
  }
  const sums = await writer.finish();
  // Who may read the segment's chunks goes live with them: no search sees a chunk before its list.
  await rt.store.searchIndex.sealSegment(scope, source.id, segNo, { ...sums, access: access.build() });
  return { bytes, replaced };
}

/**
 * Gives each chunk its embedding by the source's model (stored with the chunk, so compaction
 * carries it along). The provider's tokens are the source's usage.
 */
async function embedChunks(rt: Runtime, scope: TenantScope, source: KnowledgeSourceRecord, chunks: AnalyzedChunkRecord[]): Promise<void> {
  if (chunks.length === 0) return;
  const settings = source.embedding!;
  const { vectors, tokens } = await embedAll(await embeddingModelOf(rt, settings), chunks.map(embeddingText));
  const key = vectorModelKey(settings);
  chunks.forEach((chunk, i) => (chunk.vector = { ...quantize(vectors[i]!), m: key }));
  await recordUsage(rt, scope, { subject: { kind: 'knowledge-source', id: source.id }, model: settings.model, inputTokens: tokens });
}

/** Deletions, statistics and status `ready`. Safe to run more than once. */
async function finalize(rt: Runtime, scope: TenantScope, source: KnowledgeSourceRecord, syncId: string) {
  const sync = await rt.store.syncLedger.getSync(scope, source.id, syncId);
  const current = new Set(
    source.type === 'postgresql'
      ? await withPostgres(rt, scope, source, (client, shape) => listKeys(client, shape))
      : (await rt.store.files.listFiles(scope, source.id)).map((f) => f.path),
  );
  const documents = await rt.store.searchIndex.listDocuments(scope, source.id);
  const gone = documents.filter((d) => !current.has(d.documentKey));
  await rt.store.searchIndex.tombstone(scope, source.id, gone.flatMap((d) => d.chunks));
  await rt.store.searchIndex.deleteDocuments(scope, source.id, gone.map((d) => d.documentKey));
  const segments = await rt.store.searchIndex.readSegments(scope, source.id);
  const chunks = segments.filter((s) => s.state === 'live').reduce((n, s) => n + s.chunks - s.deletedCount, 0);
  const startedAt = sync?.startedAt ?? isoNow(rt.clock);
  await setStatus(rt, 
    scope,
    source.id,
    {
      status: 'ready',
      stats: {
        documents: documents.length - gone.length,
        chunks,
        lastSyncedAt: isoNow(rt.clock),
        durationMs: rt.clock.now() - Date.parse(startedAt),
      },
      watermark: sync?.watermark ?? source.watermark,
    },
    syncId,
  );
  log.info('knowledge source ready', { tenantId: scope.tenantId, sourceId: source.id, syncId, chunks });
  await compactIfNeeded(rt, scope, source.id, segments);
}

/** One ingestion message, a span of the trace that sent it (a connect's request, a sync's planning): the queue carries the context. */
export function handleIngestionMessage(rt: RuntimeWith<'queues' | 'secrets' | 'blobs' | 'models'>, message: IngestionMessage, delivery: Delivery): Promise<void> {
  const attributes = { 'cairn.tenant.id': message.tenantId, 'cairn.knowledge_source.id': message.sourceId, ...(message.type === 'batch' ? { 'cairn.ingestion.batch': message.batch } : {}), ...(message.type === 'compact' ? { 'cairn.compaction.id': message.compactionId } : {}) };
  return inSpan(`ingestion.${message.type} ${message.sourceId}`, { kind: SpanKind.CONSUMER, attributes }, () => processIngestionMessage(rt, message, delivery));
}

async function processIngestionMessage(rt: Runtime, message: IngestionMessage, delivery: Delivery): Promise<void> {
  const scope = scopeOf(message.tenantId);
  if (message.type === 'purge') {
    await rt.store.searchIndex.purgeIndex(scope, message.sourceId);
    await deleteAllFiles(rt, scope, message.sourceId);
    return;
  }
  const source = await knowledgeSources.find(rt, scope, message.sourceId);
  if (message.type === 'compact') {
    if (source) await handleCompaction(rt, scope, source, message.compactionId);
    return;
  }
  if (!source || source.syncId !== message.syncId) return; // deleted, or superseded by a newer sync
  try {
    if (message.type === 'sync') await handleSync(rt, scope, source, message.syncId);
    else await handleBatch(rt, scope, source, message);
  } catch (error) {
    const last = delivery.receiveCount >= delivery.maxReceives;
    // An error that no retry will fix marks the source failed at once.
    const permanent = !isRetryable(error);
    if (permanent || last) {
      const appError = error instanceof AppError ? error : new AppError('INTERNAL_ERROR', 'Ingestion failed repeatedly');
      log.error('ingestion failed', { sourceId: source.id, syncId: message.syncId, ...errorFields(error) });
      await setStatus(rt, scope, source.id, { status: 'failed', error: { code: appError.code, message: appError.message } }, message.syncId);
      if (permanent) return; // retrying cannot help: acknowledge
    }
    throw error;
  }
}
