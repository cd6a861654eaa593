import { AppError, NotFoundError, ValidationError } from '../errors';
import { newId } from '../ids';
import type { Idempotency } from '../store/records';
import { type StoredFile } from '../store/files';
import { eachLimited } from '../each-limited';
import { z } from '@hono/zod-openapi';
import { deleteFiles, readFileBytes, writeFiles, type FileBytes } from './file-contents';
import type { TenantScope } from '../tenancy';
import { deleteCredentials } from './source-credentials';
import { collection, type Precondition } from '../collection';
import { MAX_CONTENT_BYTES, SOURCE_READ_ONLY_EXTRA, SOURCE_STATUSES, SOURCE_TYPES } from './source-limits';
import {
  type FileInput,
  type KnowledgeSourceInput,
  type PostgresConfig,
  type S3Config,
  type WebConfig,
} from './source-schema';
import { withoutReadOnly } from '../read-only';
import type { Runtime } from '../runtime';
import { hostRefusal, urlRefusal } from '../net/outbound';
import { assertSearchable, searchSource, type SearchRequest } from '../search/search';
import { meteringSearches, type SearchWork } from '../search/search-meter';
import { recordUsage } from '../usage';
import type { EndUser } from '../identity';
import { documentIdOf } from './document-ids';

const sourceStatus = z.lazy(() => z.enum(SOURCE_STATUSES));
export type SourceStatus = z.infer<typeof sourceStatus>;

/** Its type's config (read through `pgConfigOf` and its siblings, by `type`); credentials sealed. */
const sourceConfig = z.lazy(() => z.custom<PostgresConfig | S3Config | WebConfig>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), { message: 'must be an object' }));

/**
 * The stored record, declared once and parsed when read (structural: an older record still reads).
 * File contents live beside it in the store, not in it.
 */
const storedSource = z.lazy(() => z.object({
  // Every record's fields, as schema-helpers' `recordFields` declares them for the API; not spread
  // from there, which would make the ingestion worker build the API's schemas at its start.
  id: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  version: z.number(),
  name: z.string(),
  description: z.string().default(''),
  type: z.enum(SOURCE_TYPES),
  status: sourceStatus,
  config: sourceConfig.optional(),
  chunking: z.object({ size: z.number(), overlap: z.number() }).optional(),
  stats: z.object({ documents: z.number(), chunks: z.number(), lastSyncedAt: z.string(), durationMs: z.number() }).optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  /** The sync in progress or last run; messages of older syncs are ignored. */
  syncId: z.string().optional(),
  /** PostgreSQL with updatedAtColumn: the database time the last sync began reading. */
  watermark: z.string().optional(),
  /** Hybrid search: the embedding model (and reranker) of the source's chunks. */
  embedding: z.object({ model: z.string(), dimensions: z.number().optional() }).optional(),
  rerank: z.object({ model: z.string(), candidates: z.number() }).optional(),
  /** web: what the last crawl reached (the first failures with their reasons). */
  crawl: z
    .object({ at: z.string(), pages: z.number(), changed: z.number(), unchanged: z.number(), removed: z.number(), failed: z.number(), failures: z.array(z.object({ url: z.string(), reason: z.string() })) })
    .optional(),
  /** Whether documents without an access list are readable by everyone (open; absent too) or by nobody. */
  access: z.enum(['open', 'restricted']).optional(),
  /** A compaction holding the source until it swaps its segments in (syncs wait for it). */
  compaction: z.object({ id: z.string(), startedAt: z.string(), until: z.string() }).optional(),
}));
export type KnowledgeSourceRecord = z.infer<typeof storedSource>;

/** A source's config as its type has it (the record holds one of them, chosen by `type`). */
export const pgConfigOf = (source: KnowledgeSourceRecord) => source.config as PostgresConfig;
export const s3ConfigOf = (source: KnowledgeSourceRecord) => source.config as S3Config;
export const webConfigOf = (source: KnowledgeSourceRecord) => source.config as WebConfig;

export const knowledgeSources = collection<KnowledgeSourceRecord>('KS', 'knowledgeSource', 'knowledge source', storedSource);

/** A request's files as bytes: text as UTF-8, `contentBase64` decoded. */
export function filesOf(inputs: FileInput[]): FileBytes[] {
  return inputs.map((f) => ({
    path: f.path,
    bytes: f.content !== undefined ? Buffer.from(f.content, 'utf8') : Buffer.from(f.contentBase64 ?? '', 'base64'),
    ...(f.contentType ? { contentType: f.contentType } : {}),
    ...(f.access ? { access: f.access } : {}),
  }));
}

function assertContentSize(files: FileBytes[]) {
  let total = 0;
  for (const file of files) total += file.bytes.byteLength;
  if (total > MAX_CONTENT_BYTES) {
    throw new AppError(
      'PAYLOAD_TOO_LARGE',
      `Files carry ${total} bytes of content; one request may carry at most ${MAX_CONTENT_BYTES} (larger files, up to 100 MB each: POST /v1/knowledge-sources/{id}/uploads)`,
      { field: 'files', limitBytes: MAX_CONTENT_BYTES, actualBytes: total },
    );
  }
}

function recordFields(input: KnowledgeSourceInput) {
  const { files: _files, ...rest } = withoutReadOnly(input, SOURCE_READ_ONLY_EXTRA) as KnowledgeSourceInput & {
    files?: unknown;
  };
  return rest;
}

/** An embedding model or reranker whose provider has no credentials here is a 400 when the source is written, not a failed sync later. */
async function assertRetrievalModels(rt: Runtime, input: KnowledgeSourceInput): Promise<void> {
  const check = async (field: string, load: (() => Promise<unknown>) | undefined) => {
    if (!load) return;
    try {
      await load();
    } catch (error) {
      if (error instanceof AppError && error.code === 'INVALID_REQUEST') throw new ValidationError(field, error.message.replace(/^\S+ /, ''));
      throw error;
    }
  };
  const { embedding, rerank } = input;
  if (embedding) await check('embedding.model', rt.models.embedding && (() => rt.models.embedding!(embedding.model, embedding.dimensions)));
  if (rerank) await check('rerank.model', rt.models.reranker && (() => rt.models.reranker!(rerank.model)));
}

/**
 * The addresses a source calls, checked when it is written as webhooks are: a database host or a
 * page the outbound guard refuses is a 400 naming the field and the setting that would allow it,
 * not a failed sync later (every sync checks again).
 */
async function assertReachable(rt: Runtime, input: KnowledgeSourceInput): Promise<void> {
  if (input.type === 'postgresql') {
    const refusal = await hostRefusal(input.config.host, input.config.port, rt.outbound);
    if (refusal) throw new ValidationError('config.host', `refers to ${refusal}`);
  }
  if (input.type === 'web') {
    const urls: Array<[string, string]> = [...input.config.startUrls.map((url, i): [string, string] => [`config.startUrls[${i}]`, url]), ...(input.config.sitemap ? [['config.sitemap', input.config.sitemap] as [string, string]] : [])];
    for (const [field, url] of urls) {
      const refusal = await urlRefusal(url, rt.outbound);
      if (refusal) throw new ValidationError(field, refusal);
    }
  }
}

export async function createKnowledgeSource(
  rt: Runtime,
  scope: TenantScope,
  input: KnowledgeSourceInput,
  idempotency?: Idempotency,
) {
  const files = input.type === 'file-collection' ? filesOf(input.files) : [];
  assertContentSize(files);
  await assertRetrievalModels(rt, input);
  await assertReachable(rt, input);
  const created = await knowledgeSources.create(rt, 
    scope,
    { ...recordFields(input), status: 'created' } as Omit<KnowledgeSourceRecord, 'id' | 'createdAt' | 'updatedAt' | 'version'>,
    { idempotency },
  );
  // Files follow the record: a retry with the same Idempotency-Key rewrites only what is missing.
  if (files.length > 0) {
    const existing = created.replayed ? await rt.store.files.listFiles(scope, created.record.id) : [];
    await writeFiles(rt, scope, created.record.id, files, existing);
  }
  return created;
}

/**
 * PUT: the record is replaced; for a file collection, so is the whole set of files. A source that
 * was connected before is re-synced in full (no watermark), so its index follows the new definition.
 */
export async function replaceKnowledgeSource(rt: Runtime, scope: TenantScope, id: string, input: KnowledgeSourceInput, precondition?: Precondition) {
  const files = input.type === 'file-collection' ? filesOf(input.files) : [];
  assertContentSize(files);
  await assertRetrievalModels(rt, input);
  await assertReachable(rt, input);
  let embeddingChanged = false;
  const replaced = await knowledgeSources.replace(rt, scope, id, (current) => {
    embeddingChanged = JSON.stringify(current.embedding ?? null) !== JSON.stringify(input.embedding ?? null);
    return {
      ...(recordFields(input) as Omit<KnowledgeSourceRecord, 'id' | 'createdAt' | 'updatedAt' | 'version' | 'status'>),
      status: current.status,
      ...(current.stats ? { stats: current.stats } : {}),
      ...(current.syncId ? { syncId: current.syncId } : {}),
    };
  }, [], precondition);
  const existing = await rt.store.files.listFiles(scope, id);
  const keep = new Set(files.map((f) => f.path));
  await writeFiles(rt, scope, id, files, existing);
  await deleteFiles(rt, scope, id, existing.filter((f) => !keep.has(f.path)));
  // Another embedding model (or none before): every document is indexed again, with new vectors.
  if (embeddingChanged) await rt.store.searchIndex.forgetDocumentHashes(scope, id);
  return replaced.status === 'created' ? replaced : startSync(rt, scope, id);
}

/**
 * Queues a new sync of the source; the status becomes `pending`. `redrives`: how often the sweeper
 * has restarted this source's work already (a re-drive that starts over keeps its count).
 */
export async function startSync(rt: Runtime, scope: TenantScope, sourceId: string, redrives = 0): Promise<KnowledgeSourceRecord> {
  const syncId = newId('sync', rt.clock.now());
  // Registered first, so that no sync in progress can escape the sweeper (work-sweeper.ts).
  await rt.store.unfinishedWork.put({ kind: 'sync', tenantId: scope.tenantId, id: sourceId, syncId, seenAt: rt.clock.now(), redrives });
  const updated = await knowledgeSources.update(rt, scope, sourceId, (current) => {
    const next: KnowledgeSourceRecord = { ...current, status: 'pending', syncId };
    delete next.error;
    return next;
  });
  if (!updated) {
    await rt.store.unfinishedWork.remove({ kind: 'sync', tenantId: scope.tenantId, id: sourceId, syncId });
    throw new NotFoundError('knowledge source', sourceId);
  }
  await rt.queues.ingestion.send([{ type: 'sync', tenantId: scope.tenantId, sourceId, syncId }]);
  return updated;
}

export function assertFileCollection(source: KnowledgeSourceRecord) {
  if (source.type !== 'file-collection') {
    throw new ValidationError('type', `is ${source.type}; only file-collection sources have files`);
  }
}

/** Bumps the source's version and updatedAt after its files changed. */
function touch(rt: Runtime, scope: TenantScope, id: string) {
  return knowledgeSources.update(rt, scope, id, (current) => current);
}

/** After a connected collection's files change, its index follows (a newer sync supersedes a running one). */
export async function afterFilesChanged(rt: Runtime, scope: TenantScope, source: KnowledgeSourceRecord) {
  if (source.status === 'created') return (await touch(rt, scope, source.id)) ?? source;
  return startSync(rt, scope, source.id);
}

export async function addFiles(rt: Runtime, scope: TenantScope, id: string, files: FileBytes[]) {
  assertContentSize(files);
  const source = await knowledgeSources.get(rt, scope, id);
  assertFileCollection(source);
  const changed = await writeFiles(rt, scope, id, files, await rt.store.files.listFiles(scope, id));
  return { source: changed.length > 0 ? await afterFilesChanged(rt, scope, source) : source, changed };
}

export async function removeFile(rt: Runtime, scope: TenantScope, id: string, path: string) {
  const source = await knowledgeSources.get(rt, scope, id);
  assertFileCollection(source);
  const file = (await rt.store.files.listFiles(scope, id)).find((f) => f.path === path);
  if (!file) throw new NotFoundError('file', path);
  await deleteFiles(rt, scope, id, [file]);
  await afterFilesChanged(rt, scope, source);
}

const TEXT_TYPES = /^(text\/|application\/json)/;

/** A source without the worker's bookkeeping (its sync's id, watermark): what a client may send back. */
export function publicSource(source: KnowledgeSourceRecord) {
  const { syncId: _sync, watermark: _watermark, ...shown } = source;
  return shown;
}

/** A source as the API shows it; with `files`, its file list (and, if asked, text files' content). */
export async function presentSource(
  rt: Runtime,
  scope: TenantScope,
  source: KnowledgeSourceRecord,
  options: { files: boolean; content?: boolean },
) {
  if (source.type === 'postgresql' || !options.files) return publicSource(source);
  const stored = await rt.store.files.listFiles(scope, source.id);
  const contents = new Map<string, string>();
  if (options.content) {
    await eachLimited(stored.filter((f) => TEXT_TYPES.test(f.contentType)), 8, async (f) => {
      contents.set(f.path, Buffer.from(await readFileBytes(rt, scope, source.id, f)).toString('utf8'));
    });
  }
  return {
    ...publicSource(source),
    fileCount: stored.length,
    totalBytes: stored.reduce((sum, f) => sum + f.size, 0),
    files: stored.map((f: StoredFile) => ({
      path: f.path,
      documentId: documentIdOf(source.id, f.path),
      ...(f.access ? { access: f.access } : {}),
      size: f.size,
      contentType: f.contentType,
      ...(f.etag ? { etag: f.etag } : { sha256: f.sha256 }),
      updatedAt: f.updatedAt,
      ...(f.error && f.error.sha256 === f.sha256 ? { error: { code: f.error.code, message: f.error.message } } : {}),
      ...(contents.has(f.path) ? { content: contents.get(f.path) } : {}),
    })),
  };
}

/**
 * Deletes the source and its credentials; its files (entries and content) and its index are purged
 * by the ingestion worker (they can be large). The agents that listed it are the agents product's
 * to update (`removeKnowledgeSource` there).
 */
export async function deleteKnowledgeSource(rt: Runtime, scope: TenantScope, id: string, precondition?: Precondition) {
  const removed = await knowledgeSources.remove(rt, scope, id, precondition);
  await deleteCredentials(rt, scope, id);
  await rt.queues.ingestion.send([{ type: 'purge', tenantId: scope.tenantId, sourceId: id }]);
  return removed;
}

/** Only a ready source is kept as read lately: one that becomes ready is searchable at once. */
export const isReady = (source: { status: string }) => source.status === 'ready';

/**
 * Searches one of the tenant's sources for a caller (counted as the source's usage, against the
 * caller's key); one that is not ready is a 409 naming its status.
 */
export async function searchKnowledgeSource(rt: Runtime, scope: TenantScope, id: string, request: SearchRequest, caller: { keyId?: string; user?: EndUser } = {}) {
  const source = await knowledgeSources.getRecent(rt, scope, id, isReady);
  assertSearchable(source);
  const searched: SearchWork = { searches: 0, readUnits: 0 };
  // Only what the end user may read is ranked (nobody named: only documents readable by everyone).
  const found = await meteringSearches(searched, () => searchSource(rt, scope, source, { ...request, ...(caller.user ? { reader: caller.user } : {}) }));
  await recordUsage(rt, scope, { keyId: caller.keyId, subject: { kind: 'knowledge-source', id: source.id }, ...searched });
  return found;
}
