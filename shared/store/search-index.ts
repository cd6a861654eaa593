import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { encodePostings } from '../search/postings-codec';
import type { Posting } from '../search/ranker';
import type { TenantScope } from '../tenancy';
import { batchGet, batchWrite, deleteRequest, putRequest, queryAll } from './batch';
import { documentClient, tableName } from './client';
import { keys } from './keys';

/**
 * The search index of one knowledge source, in DynamoDB. Every ingestion batch writes one
 * immutable segment: its chunks, one postings item per term it contains, and a segment item
 * holding its statistics and a bitmap of chunks deleted since. A segment becomes visible when its
 * item turns `live`, so a batch is searchable all at once or not at all. A chunk's number is
 * `segNo × SEGMENT_SPAN + position`, so numbers never collide between concurrent batches.
 *
 * A search reads, in one parallel wave, the segment items and each query term's postings items
 * (one Query per term, whatever the corpus size), then fetches the chunks it returns.
 */
export const SEGMENT_SPAN = 2 ** 20;

export interface SegmentRecord {
  segNo: number;
  syncId: string;
  state: 'writing' | 'live';
  chunks: number;
  lenBody: number;
  lenTitle: number;
  deleted?: Uint8Array;
  deletedCount: number;
  deletedLenBody: number;
  deletedLenTitle: number;
  /** Chunks this segment's documents replace; deleted once the segment is live. */
  replaces: ChunkRef[];
  /** The documents this segment indexes, fixed when it begins, so a redelivered batch redoes the same. */
  documentKeys: string[];
  version: number;
}

export interface ChunkRecord {
  docNo: number;
  chunkId: string;
  documentId: string;
  documentKey: string;
  title: string;
  text: string;
  metadata?: Record<string, unknown>;
  /** `term:tf` pairs separated by spaces, for feedback and for cleaning postings on purge. */
  terms: string;
  lenBody: number;
  lenTitle: number;
}

/** A chunk as its document remembers it: enough to delete it without reading it. */
export interface ChunkRef {
  docNo: number;
  lenBody: number;
  lenTitle: number;
}

export interface DocumentRecord {
  documentKey: string;
  documentId: string;
  hash: string;
  chunks: ChunkRef[];
}

const client = () => documentClient();

function toBytes(value: unknown): Uint8Array | undefined {
  if (!value) return undefined;
  return value instanceof Uint8Array ? value : new Uint8Array(value as ArrayBuffer);
}

function toSegment(item: Record<string, unknown>): SegmentRecord {
  return { ...(item as unknown as SegmentRecord), deleted: toBytes(item.deleted) };
}

/** Creates the segment in state `writing`, or returns it as it already is (a redelivered batch). */
export async function beginSegment(
  scope: TenantScope,
  sourceId: string,
  segment: { segNo: number; syncId: string; replaces: ChunkRef[]; documentKeys: string[] },
): Promise<SegmentRecord> {
  const record: SegmentRecord = {
    ...segment,
    state: 'writing',
    chunks: 0,
    lenBody: 0,
    lenTitle: 0,
    deletedCount: 0,
    deletedLenBody: 0,
    deletedLenTitle: 0,
    version: 1,
  };
  try {
    await client().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.segment(scope, sourceId, segment.segNo), ...record },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return record;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const out = await client().send(new GetCommand({ TableName: tableName(), Key: keys.segment(scope, sourceId, segment.segNo), ConsistentRead: true }));
    return toSegment(out.Item!);
  }
}

export interface AnalyzedChunkRecord extends ChunkRecord {
  titleTf: Map<string, number>;
  bodyTf: Map<string, number>;
}

/** Writes a segment's chunks and postings (overwriting the same items when a batch is redone). */
export async function writeSegmentData(
  scope: TenantScope,
  sourceId: string,
  segNo: number,
  chunks: AnalyzedChunkRecord[],
): Promise<void> {
  const byTerm = new Map<string, Posting[]>();
  for (const c of chunks) {
    const terms = new Set([...c.bodyTf.keys(), ...c.titleTf.keys()]);
    for (const term of terms) {
      const list = byTerm.get(term) ?? [];
      list.push({ doc: c.docNo - segNo * SEGMENT_SPAN, tfBody: c.bodyTf.get(term) ?? 0, tfTitle: c.titleTf.get(term) ?? 0, lenBody: c.lenBody, lenTitle: c.lenTitle });
      byTerm.set(term, list);
    }
  }
  await batchWrite(
    chunks.map(({ titleTf: _t, bodyTf: _b, ...chunk }) => putRequest({ ...keys.chunk(scope, sourceId, chunk.docNo), ...chunk })),
  );
  await batchWrite(
    [...byTerm].map(([term, postings]) => putRequest({ ...keys.termSegment(scope, sourceId, term, segNo), p: encodePostings(postings) })),
  );
}

export async function writeDocuments(scope: TenantScope, sourceId: string, documents: DocumentRecord[]): Promise<void> {
  await batchWrite(documents.map((d) => putRequest({ ...keys.document(scope, sourceId, d.documentKey), ...d })));
}

/** Makes a segment searchable with its statistics (idempotent). */
export async function sealSegment(
  scope: TenantScope,
  sourceId: string,
  segNo: number,
  sums: { chunks: number; lenBody: number; lenTitle: number },
): Promise<void> {
  await client().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.segment(scope, sourceId, segNo),
      UpdateExpression: 'SET #state = :live, chunks = :chunks, lenBody = :lenBody, lenTitle = :lenTitle',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':live': 'live', ':chunks': sums.chunks, ':lenBody': sums.lenBody, ':lenTitle': sums.lenTitle },
    }),
  );
}

/**
 * Marks chunks deleted in their segments' bitmaps. Bits already set change nothing, so a repeated
 * call (a redelivered message) is harmless. Each segment is updated with optimistic concurrency.
 */
export async function tombstone(scope: TenantScope, sourceId: string, chunks: ChunkRef[]): Promise<void> {
  const bySegment = new Map<number, typeof chunks>();
  for (const c of chunks) {
    const segNo = Math.floor(c.docNo / SEGMENT_SPAN);
    bySegment.set(segNo, [...(bySegment.get(segNo) ?? []), c]);
  }
  for (const [segNo, list] of bySegment) {
    for (let attempt = 0; ; attempt++) {
      const out = await client().send(new GetCommand({ TableName: tableName(), Key: keys.segment(scope, sourceId, segNo), ConsistentRead: true }));
      if (!out.Item) break;
      const segment = toSegment(out.Item);
      const size = Math.max(segment.deleted?.length ?? 0, Math.ceil((Math.max(...list.map((c) => c.docNo - segNo * SEGMENT_SPAN)) + 1) / 8));
      const bits = new Uint8Array(size);
      if (segment.deleted) bits.set(segment.deleted);
      let count = 0;
      let lenBody = 0;
      let lenTitle = 0;
      for (const c of list) {
        const local = c.docNo - segNo * SEGMENT_SPAN;
        const mask = 1 << (local % 8);
        if (bits[local >> 3]! & mask) continue;
        bits[local >> 3]! |= mask;
        count++;
        lenBody += c.lenBody;
        lenTitle += c.lenTitle;
      }
      if (count === 0) break;
      try {
        await client().send(
          new UpdateCommand({
            TableName: tableName(),
            Key: keys.segment(scope, sourceId, segNo),
            UpdateExpression:
              'SET deleted = :bits, deletedCount = deletedCount + :count, deletedLenBody = deletedLenBody + :lenBody, ' +
              'deletedLenTitle = deletedLenTitle + :lenTitle, version = version + :one',
            ConditionExpression: 'version = :version',
            ExpressionAttributeValues: {
              ':bits': bits,
              ':count': count,
              ':lenBody': lenBody,
              ':lenTitle': lenTitle,
              ':one': 1,
              ':version': segment.version,
            },
          }),
        );
        break;
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException) || attempt > 20) throw error;
      }
    }
  }
}

export async function readSegments(scope: TenantScope, sourceId: string): Promise<SegmentRecord[]> {
  return (await queryAll(keys.segmentPartition(scope, sourceId))).map(toSegment);
}

/** A term's postings items, one per segment that contains it. */
export type TermItems = Array<{ segNo: number; bytes: Uint8Array }>;

/** The postings items of each term: one Query per term, all in parallel. */
export async function readTermItems(scope: TenantScope, sourceId: string, terms: string[]): Promise<Map<string, TermItems>> {
  const lists = await Promise.all(
    terms.map(async (term) => {
      const items = await queryAll(keys.termPartition(scope, sourceId, term));
      return [term, items.map((item) => ({ segNo: parseInt(String(item.sk), 36), bytes: toBytes(item.p)! }))] as const;
    }),
  );
  return new Map(lists);
}

/** Chunks by number. */
export async function getChunks(scope: TenantScope, sourceId: string, docNos: number[]): Promise<Map<number, ChunkRecord>> {
  const items = await batchGet(docNos.map((n) => keys.chunk(scope, sourceId, n)));
  return new Map(items.map((item) => [Number(item.docNo), item as unknown as ChunkRecord]));
}

export async function listDocuments(scope: TenantScope, sourceId: string): Promise<DocumentRecord[]> {
  return (await queryAll(keys.documentPartition(scope, sourceId))).map(({ pk: _pk, sk: _sk, ...d }) => d as unknown as DocumentRecord);
}

export async function getDocuments(scope: TenantScope, sourceId: string, documentKeys: string[]): Promise<Map<string, DocumentRecord>> {
  const items = await batchGet(documentKeys.map((k) => keys.document(scope, sourceId, k)), { consistent: true });
  return new Map(items.map((item) => [String(item.documentKey), item as unknown as DocumentRecord]));
}

/** Reserves `count` consecutive segment numbers for a source; returns the first. */
export async function reserveSegments(scope: TenantScope, sourceId: string, count: number): Promise<number> {
  const out = await client().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.segmentCounter(scope, sourceId),
      UpdateExpression: 'ADD nextSegment :count',
      ExpressionAttributeValues: { ':count': count },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(out.Attributes?.nextSegment) - count;
}

export interface SyncRecord {
  syncId: string;
  total: number;
  done: number[];
  startedAt: string;
  /** The database's clock when reading began: the next incremental sync reads rows changed after it. */
  watermark?: string;
  /** The first of the segment numbers reserved for its batches. */
  segBase: number;
  sent: boolean;
}

/**
 * Claims the planning of a sync for one delivery of its message: true for the first claimant, or
 * for a redelivery after the claimant's lease ran out without sending the batches (it crashed);
 * false while another delivery holds the lease or once the batches are out.
 */
export async function claimSync(scope: TenantScope, sourceId: string, syncId: string, leaseMs: number): Promise<boolean> {
  const now = Date.now();
  try {
    await client().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.sync(scope, sourceId, syncId),
        UpdateExpression: 'SET leaseUntil = :until, sent = :false, syncId = :syncId, expiresAt = :expires',
        ConditionExpression: 'attribute_not_exists(pk) OR (sent = :false AND leaseUntil < :now)',
        ExpressionAttributeValues: {
          ':until': now + leaseMs,
          ':now': now,
          ':false': false,
          ':syncId': syncId,
          ':expires': Math.floor(now / 1000) + 30 * 86400,
        },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

/** Records the plan of a claimed sync. */
export async function saveSyncPlan(scope: TenantScope, sourceId: string, plan: Pick<SyncRecord, 'syncId' | 'total' | 'startedAt' | 'watermark' | 'segBase'>): Promise<void> {
  await client().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.sync(scope, sourceId, plan.syncId),
      UpdateExpression: 'SET #total = :total, startedAt = :startedAt, segBase = :segBase' + (plan.watermark ? ', watermark = :watermark' : ''),
      ConditionExpression: 'sent = :false',
      ExpressionAttributeNames: { '#total': 'total' },
      ExpressionAttributeValues: {
        ':total': plan.total,
        ':startedAt': plan.startedAt,
        ':segBase': plan.segBase,
        ':false': false,
        ...(plan.watermark ? { ':watermark': plan.watermark } : {}),
      },
    }),
  );
}

export async function getSync(scope: TenantScope, sourceId: string, syncId: string): Promise<SyncRecord | undefined> {
  const out = await client().send(new GetCommand({ TableName: tableName(), Key: keys.sync(scope, sourceId, syncId), ConsistentRead: true }));
  if (!out.Item) return undefined;
  const { done, ...rest } = out.Item as SyncRecord & { done?: Set<number> };
  return { ...(rest as SyncRecord), done: done ? [...done] : [] };
}

export async function markSyncSent(scope: TenantScope, sourceId: string, syncId: string): Promise<void> {
  await client().send(
    new UpdateCommand({ TableName: tableName(), Key: keys.sync(scope, sourceId, syncId), UpdateExpression: 'SET sent = :t', ExpressionAttributeValues: { ':t': true } }),
  );
}

/** Adds a batch to the sync's done set (a set: counting twice is impossible); returns how many are done. */
export async function markBatchDone(scope: TenantScope, sourceId: string, syncId: string, batch: number): Promise<{ done: number; total: number }> {
  const out = await client().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.sync(scope, sourceId, syncId),
      UpdateExpression: 'ADD done :batch',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':batch': new Set([batch]) },
      ReturnValues: 'ALL_NEW',
    }),
  );
  const done = out.Attributes?.done as Set<number> | undefined;
  return { done: done?.size ?? 0, total: Number(out.Attributes?.total) };
}

export async function deleteDocuments(scope: TenantScope, sourceId: string, documentKeys: string[]): Promise<void> {
  await batchWrite(documentKeys.map((k) => deleteRequest(keys.document(scope, sourceId, k))));
}

/** Removes a source's whole index: postings (found through the chunks' terms), chunks, documents, segments. */
export async function purgeIndex(scope: TenantScope, sourceId: string): Promise<void> {
  const chunks = await queryAll(keys.chunkPartition(scope, sourceId));
  const terms = new Set<string>();
  for (const chunk of chunks) for (const pair of String(chunk.terms ?? '').split(' ')) if (pair) terms.add(pair.slice(0, pair.lastIndexOf(':')));
  for (const term of terms) {
    const pk = keys.termPartition(scope, sourceId, term);
    await batchWrite((await queryAll(pk)).map((item) => deleteRequest({ pk, sk: String(item.sk) })));
  }
  for (const pk of [
    keys.chunkPartition(scope, sourceId),
    keys.documentPartition(scope, sourceId),
    keys.segmentPartition(scope, sourceId),
    keys.sync(scope, sourceId, '').pk,
  ]) {
    await batchWrite((await queryAll(pk)).map((item) => deleteRequest({ pk, sk: String(item.sk) })));
  }
  await batchWrite([deleteRequest(keys.segmentCounter(scope, sourceId))]);
}
