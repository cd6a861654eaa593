import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { encodePostings, type Posting } from './postings-codec';
import type { TenantScope } from '../tenancy';
import { deleteRequest, putRequest, batchOps } from './batch';
import type { Db } from './db';
import { keys } from './keys';
import { searchIndexCache, type TermItems } from './search-index-cache';

/**
 * The search index of one knowledge source, in DynamoDB. Every ingestion batch writes one
 * immutable segment: its chunks, one postings item per term it contains, and a segment item
 * holding its statistics and a bitmap of chunks deleted since. A segment becomes visible when its
 * item turns `live`, so a batch is searchable all at once or not at all. A chunk's number is
 * `segNo × SEGMENT_SPAN + position`, so numbers never collide between concurrent batches.
 *
 * A search reads the segment items, then each query term's postings items (one Query per term,
 * whatever the corpus size), then fetches the chunks it returns. Items of live segments never
 * change, so this process keeps recently read ones (search-index-cache.ts).
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

function toBytes(value: unknown): Uint8Array | undefined {
  if (!value) return undefined;
  return value instanceof Uint8Array ? value : new Uint8Array(value as ArrayBuffer);
}

function toSegment(item: Record<string, unknown>): SegmentRecord {
  return { ...(item as unknown as SegmentRecord), deleted: toBytes(item.deleted) };
}

export interface AnalyzedChunkRecord extends ChunkRecord {
  titleTf: Map<string, number>;
  bodyTf: Map<string, number>;
}

/** A term's postings items, one per segment that contains it. */
export type { TermItems } from './search-index-cache';

export function searchIndexStore(db: Db) {
  const { batchWrite, batchGet, queryAll } = batchOps(db);
  const cache = searchIndexCache<ChunkRecord>((docNo) => Math.floor(docNo / SEGMENT_SPAN));
  /** Creates the segment in state `writing`, or returns it as it already is (a redelivered batch). */
  async function beginSegment(
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
      await db.client.send(
        new PutCommand({
          TableName: db.table,
          Item: { ...keys.segment(scope, sourceId, segment.segNo), ...record },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return record;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.segment(scope, sourceId, segment.segNo), ConsistentRead: true }));
      return toSegment(out.Item!);
    }
  }

  /** Writes a segment's chunks and postings (overwriting the same items when a batch is redone). */
  async function writeSegmentData(
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

  async function writeDocuments(scope: TenantScope, sourceId: string, documents: DocumentRecord[]): Promise<void> {
    await batchWrite(documents.map((d) => putRequest({ ...keys.document(scope, sourceId, d.documentKey), ...d })));
  }

  /** Makes a segment searchable with its statistics (idempotent). */
  async function sealSegment(
    scope: TenantScope,
    sourceId: string,
    segNo: number,
    sums: { chunks: number; lenBody: number; lenTitle: number },
  ): Promise<void> {
    await db.client.send(
      new UpdateCommand({
        TableName: db.table,
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
  async function tombstone(scope: TenantScope, sourceId: string, chunks: ChunkRef[]): Promise<void> {
    const bySegment = new Map<number, typeof chunks>();
    for (const c of chunks) {
      const segNo = Math.floor(c.docNo / SEGMENT_SPAN);
      bySegment.set(segNo, [...(bySegment.get(segNo) ?? []), c]);
    }
    for (const [segNo, list] of bySegment) {
      for (let attempt = 0; ; attempt++) {
        const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.segment(scope, sourceId, segNo), ConsistentRead: true }));
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
          await db.client.send(
            new UpdateCommand({
              TableName: db.table,
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

  async function readSegments(scope: TenantScope, sourceId: string): Promise<SegmentRecord[]> {
    const segments = (await queryAll(keys.segmentPartition(scope, sourceId))).map(toSegment);
    cache.observeLive(scope, sourceId, segments.filter((s) => s.state === 'live').map((s) => s.segNo), Date.now());
    return segments;
  }

  /**
   * The postings items of each term in the given live segments: from the cache where it holds
   * all of them, else one Query per term, all in parallel.
   */
  async function readTermItems(scope: TenantScope, sourceId: string, terms: string[], live: number[]): Promise<Map<string, TermItems>> {
    const found = new Map<string, TermItems>();
    const missing: string[] = [];
    for (const term of terms) {
      const cached = cache.termItems(scope, sourceId, term, live);
      if (cached) found.set(term, cached);
      else missing.push(term);
    }
    const issuedAt = Date.now();
    const lists = await Promise.all(
      missing.map(async (term) => {
        const items = await queryAll(keys.termPartition(scope, sourceId, term));
        return [term, items.map((item) => ({ segNo: parseInt(String(item.sk), 36), bytes: toBytes(item.p)! }))] as const;
      }),
    );
    for (const [term, items] of lists) {
      cache.keepTermItems(scope, sourceId, term, items, issuedAt);
      found.set(term, items);
    }
    return found;
  }

  /** Chunks by number (from the cache where it has them). */
  async function getChunks(scope: TenantScope, sourceId: string, docNos: number[]): Promise<Map<number, ChunkRecord>> {
    const found = new Map<number, ChunkRecord>();
    const missing: number[] = [];
    for (const n of docNos) {
      const cached = cache.chunk(scope, sourceId, n);
      if (cached) found.set(n, cached);
      else missing.push(n);
    }
    if (missing.length === 0) return found;
    const issuedAt = Date.now();
    for (const item of await batchGet(missing.map((n) => keys.chunk(scope, sourceId, n)))) {
      const chunk = item as unknown as ChunkRecord;
      found.set(Number(chunk.docNo), chunk);
      cache.keepChunk(scope, sourceId, chunk, issuedAt);
    }
    return found;
  }

  async function listDocuments(scope: TenantScope, sourceId: string): Promise<DocumentRecord[]> {
    return (await queryAll(keys.documentPartition(scope, sourceId))).map(({ pk: _pk, sk: _sk, ...d }) => d as unknown as DocumentRecord);
  }

  async function getDocuments(scope: TenantScope, sourceId: string, documentKeys: string[]): Promise<Map<string, DocumentRecord>> {
    const items = await batchGet(documentKeys.map((k) => keys.document(scope, sourceId, k)), { consistent: true });
    return new Map(items.map((item) => [String(item.documentKey), item as unknown as DocumentRecord]));
  }

  /** Reserves `count` consecutive segment numbers for a source; returns the first. */
  async function reserveSegments(scope: TenantScope, sourceId: string, count: number): Promise<number> {
    const out = await db.client.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.segmentCounter(scope, sourceId),
        UpdateExpression: 'ADD nextSegment :count',
        ExpressionAttributeValues: { ':count': count },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Number(out.Attributes?.nextSegment) - count;
  }

  async function deleteDocuments(scope: TenantScope, sourceId: string, documentKeys: string[]): Promise<void> {
    await batchWrite(documentKeys.map((k) => deleteRequest(keys.document(scope, sourceId, k))));
  }

  /** Removes a source's whole index: postings (found through the chunks' terms), chunks, documents, segments. */
  async function purgeIndex(scope: TenantScope, sourceId: string): Promise<void> {
    const chunks = await queryAll(keys.chunkPartition(scope, sourceId));
    const terms = new Set<string>();
    for (const chunk of chunks) for (const pair of ((chunk.terms as string | undefined) ?? '').split(' ')) if (pair) terms.add(pair.slice(0, pair.lastIndexOf(':')));
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
  return { beginSegment, writeSegmentData, writeDocuments, sealSegment, tombstone, readSegments, readTermItems, getChunks, listDocuments, getDocuments, reserveSegments, deleteDocuments, purgeIndex };
}

export type SearchIndexStore = ReturnType<typeof searchIndexStore>;
