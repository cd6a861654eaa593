import type { Clock } from '../clock';
import { ConditionalCheckFailedException, GetCommand, PutCommand, QueryCommand, TransactionCanceledException, TransactWriteCommand, UpdateCommand } from './dynamo-commands';
import { decodeChunkRefs, decodeDirectory, decodeNorms, encodeChunkRefs, encodeNorms, POSTINGS_FORMAT, type Posting, type SegmentNorms } from './postings-codec';
import type { TenantScope } from '../tenancy';
import { deleteRequest, putRequest, batchOps, type WriteRequest } from './batch';
import type { Db } from './db';
import { BLOCK_PREFIX, blockSegment, blockSortKey, keys } from './keys';
import { recentReads } from './recent-reads';
import { searchIndexCache, type TermItems } from './search-index-cache';
import { readItem } from './item-shape';
import { z } from 'zod';
import { withChunkAccess, type AccessList, type SegmentAccess } from './segment-access';

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

/** Binary attributes come back as Uint8Array (an ArrayBuffer from some clients: made one too). */
const bytes = z.lazy(() => z.union([z.custom<Uint8Array>((v) => v instanceof Uint8Array), z.instanceof(ArrayBuffer).transform((b): Uint8Array => new Uint8Array(b))]));

/** A chunk as its document remembers it: enough to delete it without reading it. */
const chunkRefShape = z.lazy(() => z.object({ docNo: z.number(), lenBody: z.number(), lenTitle: z.number() }));
export type ChunkRef = z.infer<typeof chunkRefShape>;

const segmentShape = z.lazy(() => z.object({
  segNo: z.number(),
  syncId: z.string(),
  state: z.enum(['writing', 'live']),
  chunks: z.number(),
  lenBody: z.number(),
  lenTitle: z.number(),
  deleted: bytes.optional(),
  deletedCount: z.number(),
  deletedLenBody: z.number(),
  deletedLenTitle: z.number(),
  /** Written before documents recorded what they replace (their own `replaced`): what such a segment's documents replace. */
  replaces: z.array(chunkRefShape).optional(),
  version: z.number(),
  /** Postings format (postings-codec.ts): 2 keeps field lengths in the segment's norms; absent, format 1. */
  format: z.number().optional(),
  /** Who may read its chunks (segment-access.ts); absent: none of its documents has an access list. */
  access: z.object({ classes: z.array(z.object({ users: z.array(z.string()), groups: z.array(z.string()) })), runs: bytes }).optional(),
}));
export type SegmentRecord = z.infer<typeof segmentShape>;

/**
 * A compaction: the live segments it merges, as they were when it began (a later tombstone makes
 * the swap fail rather than resurrect a chunk), and the segments it writes.
 */
const compactionShape = z.lazy(() => z.object({
  compactionId: z.string(),
  state: z.enum(['writing', 'swapped', 'cleanup', 'done', 'abandoned']),
  old: z.array(z.object({ segNo: z.number(), chunks: z.number(), version: z.number(), deleted: bytes.optional() })),
  segNos: z.array(z.number()),
  createdAt: z.string(),
}));
export type CompactionRecord = z.infer<typeof compactionShape>;

/** A chunk's embedding as stored with it: int8 components scaled by `s`, made by model `m`. */
const storedVectorShape = z.lazy(() => z.object({ v: bytes, s: z.number(), m: z.string() }));
export type StoredVector = z.infer<typeof storedVectorShape>;

const chunkShape = z.lazy(() => z.object({
  docNo: z.number(),
  chunkId: z.string(),
  documentId: z.string(),
  documentKey: z.string(),
  title: z.string(),
  text: z.string(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  /** Its embedding, for sources with an embedding model (hybrid search reads it with the chunk). */
  vector: storedVectorShape.optional(),
  /** Page (and last page), slide or sheet of a paged document. */
  location: z.object({ page: z.number().optional(), pageEnd: z.number().optional(), slide: z.number().optional(), sheet: z.string().optional() }).optional(),
  /** `term:tf` pairs separated by spaces, for feedback and for cleaning postings on purge. */
  terms: z.string(),
  lenBody: z.number(),
  lenTitle: z.number(),
}));
export type ChunkRecord = z.infer<typeof chunkShape>;

const documentShape = z.lazy(() => z.object({
  documentKey: z.string(),
  documentId: z.string(),
  hash: z.string(),
  chunks: z.array(chunkRefShape),
  /**
   * The segment that indexed this version, and the chunks of the version it replaced: a segment
   * redone after a crash knows its own documents by `seg` (their hash no longer looks changed)
   * and still tombstones what they replaced.
   */
  seg: z.number().optional(),
  replaced: z.array(chunkRefShape).optional(),
  /** Who may read it (none: the source's mode decides). */
  access: z.object({ users: z.array(z.string()), groups: z.array(z.string()) }).optional(),
}));
export type DocumentRecord = z.infer<typeof documentShape>;

/** Whether a segment's deletion bitmap marks the chunk at `local`. */
export function isDeleted(deleted: Uint8Array | undefined, local: number): boolean {
  return deleted !== undefined && local >> 3 < deleted.length && (deleted[local >> 3]! & (1 << (local % 8))) !== 0;
}

function toBytes(value: unknown): Uint8Array | undefined {
  if (!value) return undefined;
  return value instanceof Uint8Array ? value : new Uint8Array(value as ArrayBuffer);
}

const toSegment = (item: Record<string, unknown>): SegmentRecord => readItem(segmentShape, item, 'segment');
const toChunk = (item: Record<string, unknown>): ChunkRecord => readItem(chunkShape, item, 'chunk');
/**
 * A document as stored: its chunk lists as varint triples in `c` (chunks) and `r` (replaced), or,
 * in items written before that, `chunks` as a list of maps.
 */
function toDocument(item: Record<string, unknown>): DocumentRecord {
  if (item.c === undefined) return readItem(documentShape, item, 'document');
  const { c, r, ...rest } = item;
  return readItem(documentShape, { ...rest, chunks: decodeChunkRefs(toBytes(c) ?? new Uint8Array()), ...(r !== undefined ? { replaced: decodeChunkRefs(toBytes(r) ?? new Uint8Array()) } : {}) }, 'document');
}

export interface AnalyzedChunkRecord extends ChunkRecord {
  titleTf: ReadonlyMap<string, number>;
  bodyTf: ReadonlyMap<string, number>;
}

/** A term's directory items, one per segment that contains it. */
export type { TermItems } from './search-index-cache';

/**
 * How one term's postings in one segment are stored: inline in its directory item, or as blocks
 * (each with its impact key) listed by a directory of their envelopes (postings-codec.ts).
 */
export interface TermLayout {
  inline?: Uint8Array;
  count?: number;
  directory?: Uint8Array;
  blocks?: Array<{ impact: number; bytes: Uint8Array }>;
}

/** One block of a term's postings as a search reads it. */
export interface TermBlock {
  sk: string;
  segNo: number;
  bytes: Uint8Array;
}

/** What makes a written segment live: its sums, and who may read its chunks. */
export interface SegmentSums {
  segNo: number;
  chunks: number;
  lenBody: number;
  lenTitle: number;
  access?: SegmentAccess;
}

/** A segment's statistics, with which its postings are laid out (impact-blocks.ts). */
export interface SegmentStats {
  documents: number;
  totalBodyLength: number;
  totalTitleLength: number;
}

/** A segment's norms (about 3 bytes a chunk) are stored in parts of at most `partBytes` (an item holds 400 KB); tests make them small. */
export const normsStorage = { partBytes: 350_000 };

/** Batch writes a segment writer keeps in flight (DynamoDB takes them in parallel; against DynamoDB Local 16 or 32 wrote no faster than 8). */
const WRITE_CONCURRENCY = 8;

/** A segment's term list is kept in pages of at most this many characters (an item holds 400 KB). */
const TERMS_PAGE_CHARS = 300_000;

export function searchIndexStore(db: Db, clock: Clock, cacheBytes?: number) {
  const { batchWrite, batchGet, queryAll } = batchOps(db);
  const cache = searchIndexCache<ChunkRecord>((docNo) => Math.floor(docNo / SEGMENT_SPAN), cacheBytes);
  /** Sources' segment items as a search read them lately (`recentSegments`), forgotten when this instance changes them. */
  const recentSegmentItems = recentReads<Array<Record<string, unknown>>>(1000);
  const changingSegments = <R>(scope: TenantScope, sourceId: string, write: () => Promise<R>): Promise<R> => recentSegmentItems.writing(keys.segmentPartition(scope, sourceId), write);
  /** The update that makes a written segment live with its sums (a batch seals one, a compaction swaps several in). */
  const goLive = (scope: TenantScope, sourceId: string, sums: SegmentSums) => ({
    TableName: db.table,
    Key: keys.segment(scope, sourceId, sums.segNo),
    UpdateExpression: `SET #state = :live, chunks = :chunks, lenBody = :lenBody, lenTitle = :lenTitle, #format = :format${sums.access ? ', #access = :access' : ' REMOVE #access'}`,
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeNames: { '#state': 'state', '#format': 'format', '#access': 'access' },
    ExpressionAttributeValues: { ':live': 'live', ':chunks': sums.chunks, ':lenBody': sums.lenBody, ':lenTitle': sums.lenTitle, ':format': POSTINGS_FORMAT, ...(sums.access ? { ':access': sums.access } : {}) },
  });

  /** Deletes every item of a partition. */
  const clearPartition = async (pk: string) => batchWrite((await queryAll(pk)).map((item) => deleteRequest({ pk, sk: String(item.sk) })));

  /** Creates the segment in state `writing`, or returns it as it already is (a redelivered batch). */
  async function beginSegment(scope: TenantScope, sourceId: string, segment: { segNo: number; syncId: string }): Promise<SegmentRecord> {
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

  /**
   * Writes one segment's data as it comes (overwriting the same items when a batch is redone):
   * `add` writes chunks at once and keeps only their postings, compactly; `finish` writes the term
   * list (first, so whatever of the postings exists can be found and removed), the norms and the
   * postings, laid out with the whole segment's statistics. So a segment of any size is written
   * once, in one pass, with its chunks' text never all in memory.
   */
  function segmentWriter(scope: TenantScope, sourceId: string, segNo: number, layoutOf: (postings: Posting[], stats: SegmentStats) => TermLayout) {
    const base = segNo * SEGMENT_SPAN;
    /** Per term, its postings as flat triples: local chunk number, body and title frequency. */
    const byTerm = new Map<string, number[]>();
    const lenBody: number[] = [];
    const lenTitle: number[] = [];
    const sums = { chunks: 0, lenBody: 0, lenTitle: 0 };
    return {
      async add(chunks: AnalyzedChunkRecord[]): Promise<void> {
        const items = [];
        const post = (term: string, local: number, tfBody: number, tfTitle: number) => {
          const list = byTerm.get(term);
          if (list) list.push(local, tfBody, tfTitle);
          else byTerm.set(term, [local, tfBody, tfTitle]);
        };
        for (const { titleTf, bodyTf, ...chunk } of chunks) {
          const local = chunk.docNo - base;
          for (const [term, tf] of bodyTf) post(term, local, tf, titleTf.get(term) ?? 0);
          for (const [term, tf] of titleTf) if (!bodyTf.has(term)) post(term, local, 0, tf);
          lenBody[local] = chunk.lenBody;
          lenTitle[local] = chunk.lenTitle;
          sums.chunks++;
          sums.lenBody += chunk.lenBody;
          sums.lenTitle += chunk.lenTitle;
          items.push(putRequest({ ...keys.chunk(scope, sourceId, chunk.docNo), ...chunk }));
        }
        await batchWrite(items, WRITE_CONCURRENCY);
      },
      /** Writes the postings; the segment's sums, to seal it with. */
      async finish(): Promise<{ chunks: number; lenBody: number; lenTitle: number }> {
        await writeTermList(scope, sourceId, segNo, [...byTerm.keys()]);
        const norms = Array.from({ length: lenBody.length }, (_, local) => ({ lenBody: lenBody[local] ?? 0, lenTitle: lenTitle[local] ?? 0 }));
        await writeNorms(scope, sourceId, segNo, encodeNorms(norms));
        const stats = { documents: sums.chunks, totalBodyLength: sums.lenBody, totalTitleLength: sums.lenTitle };
        let requests: WriteRequest[] = [];
        for (const [term, flat] of byTerm) {
          const postings: Posting[] = [];
          for (let i = 0; i < flat.length; i += 3) {
            const doc = flat[i]!;
            postings.push({ doc, tfBody: flat[i + 1]!, tfTitle: flat[i + 2]!, lenBody: lenBody[doc]!, lenTitle: lenTitle[doc]! });
          }
          // Chunks are added in number order (sorting an ordered list is cheap), but the layout must not depend on it.
          postings.sort((a, b) => a.doc - b.doc);
          const layout = layoutOf(postings, stats);
          const directory = keys.termSegment(scope, sourceId, term, segNo);
          if (layout.inline) requests.push(putRequest({ ...directory, p: layout.inline }));
          else {
            requests.push(putRequest({ ...directory, term, n: layout.count, d: layout.directory }));
            layout.blocks!.forEach((block, index) => requests.push(putRequest({ ...keys.termBlock(scope, sourceId, term, { impact: block.impact, segNo, index }), p: block.bytes })));
          }
          if (requests.length >= 2_000) {
            await batchWrite(requests, WRITE_CONCURRENCY);
            requests = [];
          }
        }
        await batchWrite(requests, WRITE_CONCURRENCY);
        return { ...sums };
      },
    };
  }

  async function writeNorms(scope: TenantScope, sourceId: string, segNo: number, norms: Uint8Array): Promise<void> {
    const partBytes = normsStorage.partBytes;
    const parts = Math.max(1, Math.ceil(norms.length / partBytes));
    const items = Array.from({ length: parts }, (_, part) => ({
      ...keys.norms(scope, sourceId, segNo, part),
      segNo,
      part,
      ...(part === 0 && parts > 1 ? { parts } : {}),
      n: norms.subarray(part * partBytes, (part + 1) * partBytes),
    }));
    await batchWrite(items.map(putRequest));
  }

  async function writeTermList(scope: TenantScope, sourceId: string, segNo: number, terms: string[]): Promise<void> {
    const pk = keys.segmentTermsPartition(scope, sourceId, segNo);
    const pages: string[] = [];
    let page = '';
    for (const term of terms) {
      if (page.length + term.length + 1 > TERMS_PAGE_CHARS) {
        pages.push(page);
        page = '';
      }
      page += page ? ` ${term}` : term;
    }
    if (page) pages.push(page);
    await batchWrite(pages.map((terms, i) => putRequest({ pk, sk: String(i).padStart(5, '0'), terms })));
  }

  /** The terms a segment holds postings of (empty for segments written before term lists were kept). */
  async function readTermList(scope: TenantScope, sourceId: string, segNo: number): Promise<string[]> {
    const pages = await queryAll(keys.segmentTermsPartition(scope, sourceId, segNo));
    return pages.flatMap((page) => String(page.terms).split(' ').filter(Boolean));
  }

  /**
   * Removes segments' postings: each term's directory item and the blocks it lists, found
   * through the segments' term lists; then the term lists. The segment items are the caller's.
   */
  async function deleteSegmentPostings(scope: TenantScope, sourceId: string, segNos: number[]): Promise<void> {
    for (const segNo of segNos) {
      const terms = await readTermList(scope, sourceId, segNo);
      const directories = await batchGet(terms.map((term) => keys.termSegment(scope, sourceId, term, segNo)), { consistent: true });
      const requests = terms.map((term) => deleteRequest(keys.termSegment(scope, sourceId, term, segNo)));
      for (const item of directories) {
        if (item.d === undefined) continue;
        const term = item.term as string;
        decodeDirectory(toBytes(item.d)!).forEach(({ impact }, index) => requests.push(deleteRequest(keys.termBlock(scope, sourceId, term, { impact, segNo, index }))));
      }
      const norms = await batchGet([keys.norms(scope, sourceId, segNo)], { consistent: true });
      const parts = Number(norms[0]?.parts ?? 1);
      await batchWrite([...requests, ...Array.from({ length: parts }, (_, part) => deleteRequest(keys.norms(scope, sourceId, segNo, part)))]);
      await clearPartition(keys.segmentTermsPartition(scope, sourceId, segNo));
    }
  }

  /** Makes every document look changed to the next sync, which then indexes (and embeds) them all again. */
  async function forgetDocumentHashes(scope: TenantScope, sourceId: string): Promise<void> {
    const documents = await listDocuments(scope, sourceId);
    await writeDocuments(scope, sourceId, documents.map((d) => ({ ...d, hash: '' })));
  }

  async function writeDocuments(scope: TenantScope, sourceId: string, documents: DocumentRecord[]): Promise<void> {
    await batchWrite(
      documents.map(({ chunks, replaced, ...d }) =>
        putRequest({ ...keys.document(scope, sourceId, d.documentKey), ...d, c: encodeChunkRefs(chunks), ...(replaced?.length ? { r: encodeChunkRefs(replaced) } : {}) }),
      ),
      WRITE_CONCURRENCY,
    );
  }

  /** Makes a segment searchable with its statistics (idempotent). */
  async function sealSegment(
    scope: TenantScope,
    sourceId: string,
    segNo: number,
    sums: Omit<SegmentSums, 'segNo'>,
  ): Promise<void> {
    await changingSegments(scope, sourceId, () => db.client.send(new UpdateCommand(goLive(scope, sourceId, { segNo, ...sums }))));
  }

  /**
   * Gives chunks (a document's) an access list, or none, in their live segments' items. False when
   * one of their segments is no longer live (a compaction moved them: read the document again).
   */
  function setChunkAccess(scope: TenantScope, sourceId: string, docNos: number[], access: AccessList | undefined): Promise<boolean> {
    return changingSegments(scope, sourceId, () =>
      changeEachSegment(scope, sourceId, docNos.map((docNo) => ({ docNo })), (segment, locals) => {
        if (!segment || segment.state !== 'live') return 'stop';
        const next = withChunkAccess(segment.access, segment.chunks, locals.map((c) => c.local), access);
        return next ? { set: ['#access = :access'], names: { '#access': 'access' }, values: { ':access': next } } : { remove: ['#access'], names: { '#access': 'access' } };
      }),
    );
  }

  /**
   * Marks chunks deleted in their segments' bitmaps. Bits already set change nothing, so a repeated
   * call (a redelivered message) is harmless.
   */
  function tombstone(scope: TenantScope, sourceId: string, chunks: ChunkRef[]): Promise<void> {
    return changingSegments(scope, sourceId, () => markDeleted(scope, sourceId, chunks));
  }

  async function markDeleted(scope: TenantScope, sourceId: string, chunks: ChunkRef[]): Promise<void> {
    await changeEachSegment(scope, sourceId, chunks, (segment, list) => {
      if (!segment) return 'skip';
      const size = Math.max(segment.deleted?.length ?? 0, Math.ceil((Math.max(...list.map((c) => c.local)) + 1) / 8));
      const bits = new Uint8Array(size);
      if (segment.deleted) bits.set(segment.deleted);
      let count = 0;
      let lenBody = 0;
      let lenTitle = 0;
      for (const c of list) {
        const mask = 1 << (c.local % 8);
        if (bits[c.local >> 3]! & mask) continue;
        bits[c.local >> 3]! |= mask;
        count++;
        lenBody += c.lenBody;
        lenTitle += c.lenTitle;
      }
      if (count === 0) return 'skip';
      return {
        set: ['deleted = :bits', 'deletedCount = deletedCount + :count', 'deletedLenBody = deletedLenBody + :lenBody', 'deletedLenTitle = deletedLenTitle + :lenTitle'],
        values: { ':bits': bits, ':count': count, ':lenBody': lenBody, ':lenTitle': lenTitle },
      };
    });
  }

  /**
   * Changes the segments that hold some chunks, each by a read and a write under its version (a
   * change in between is read again, up to 20 times). `change` is given the segment (undefined when
   * it is gone) and its chunks with their place in it (`local`), and answers the update, `skip`
   * (nothing to change there) or `stop` (change no more: false).
   */
  async function changeEachSegment<C extends { docNo: number }>(
    scope: TenantScope,
    sourceId: string,
    chunks: C[],
    change: (segment: SegmentRecord | undefined, chunks: Array<C & { local: number }>) => { set?: string[]; remove?: string[]; names?: Record<string, string>; values?: Record<string, unknown> } | 'skip' | 'stop',
  ): Promise<boolean> {
    const bySegment = new Map<number, Array<C & { local: number }>>();
    for (const c of chunks) {
      const segNo = Math.floor(c.docNo / SEGMENT_SPAN);
      bySegment.set(segNo, [...(bySegment.get(segNo) ?? []), { ...c, local: c.docNo - segNo * SEGMENT_SPAN }]);
    }
    for (const [segNo, list] of bySegment) {
      for (let attempt = 0; ; attempt++) {
        const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.segment(scope, sourceId, segNo), ConsistentRead: true }));
        const segment = out.Item ? toSegment(out.Item) : undefined;
        const update = change(segment, list);
        if (update === 'stop') return false;
        if (update === 'skip') break;
        try {
          await db.client.send(
            new UpdateCommand({
              TableName: db.table,
              Key: keys.segment(scope, sourceId, segNo),
              UpdateExpression: `SET ${[...(update.set ?? []), 'version = version + :one'].join(', ')}${update.remove?.length ? ` REMOVE ${update.remove.join(', ')}` : ''}`,
              ConditionExpression: 'version = :version',
              ...(update.names ? { ExpressionAttributeNames: update.names } : {}),
              ExpressionAttributeValues: { ...update.values, ':one': 1, ':version': segment!.version },
            }),
          );
          break;
        } catch (error) {
          if (!(error instanceof ConditionalCheckFailedException) || attempt > 20) throw error;
        }
      }
    }
    return true;
  }

  async function readSegments(scope: TenantScope, sourceId: string): Promise<SegmentRecord[]> {
    return segmentsOf(scope, sourceId, await queryAll(keys.segmentPartition(scope, sourceId)));
  }

  /**
   * `readSegments` for searches, which may take the list as this instance read it within
   * RECENT_MS (recent-reads.ts): a segment that went live or a chunk deleted on another instance
   * is seen within it, on this one at once.
   */
  async function recentSegments(scope: TenantScope, sourceId: string): Promise<SegmentRecord[]> {
    const pk = keys.segmentPartition(scope, sourceId);
    return segmentsOf(scope, sourceId, (await recentSegmentItems.read(pk, () => queryAll(pk))) ?? []);
  }

  function segmentsOf(scope: TenantScope, sourceId: string, items: Array<Record<string, unknown>>): SegmentRecord[] {
    const segments = items.map(toSegment);
    cache.observeLive(scope, sourceId, segments.filter((s) => s.state === 'live').map((s) => s.segNo), clock.now());
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
    const issuedAt = clock.now();
    const lists = await Promise.all(
      missing.map(async (term) => {
        const items = await queryAll(keys.termPartition(scope, sourceId, term), { before: BLOCK_PREFIX });
        return [
          term,
          items.map((item) =>
            item.n === undefined
              ? { segNo: parseInt(String(item.sk), 36), bytes: toBytes(item.p)! }
              : { segNo: parseInt(String(item.sk), 36), bytes: toBytes(item.d)!, count: Number(item.n) },
          ),
        ] as const;
      }),
    );
    for (const [term, items] of lists) {
      cache.keepTermItems(scope, sourceId, term, items, issuedAt);
      found.set(term, items);
    }
    return found;
  }

  /**
   * A term's next blocks in impact order (all segments' blocks, live or not), after the sort key
   * `after`: `limit` of them, or all that are left. `last` continues the read.
   */
  async function readTermBlocks(scope: TenantScope, sourceId: string, term: string, after: string | undefined, limit?: number): Promise<{ blocks: TermBlock[]; last?: string }> {
    const blocks: TermBlock[] = [];
    let start: Record<string, unknown> | undefined = after === undefined ? undefined : { pk: keys.termPartition(scope, sourceId, term), sk: after };
    do {
      const out = await db.client.send(
        new QueryCommand({
          TableName: db.table,
          KeyConditionExpression: 'pk = :pk AND sk > :blocks',
          ExpressionAttributeValues: { ':pk': keys.termPartition(scope, sourceId, term), ':blocks': BLOCK_PREFIX },
          ExclusiveStartKey: start,
          Limit: limit === undefined ? undefined : limit - blocks.length,
        }),
      );
      for (const item of out.Items ?? []) blocks.push({ sk: String(item.sk), segNo: blockSegment(String(item.sk)), bytes: toBytes(item.p)! });
      start = out.LastEvaluatedKey;
    } while (start && (limit === undefined || blocks.length < limit));
    return { blocks, last: blocks.length > 0 ? blocks[blocks.length - 1]!.sk : after };
  }

  /** A segment's chunks in number order, read consistently (compaction copies them). */
  async function readSegmentChunks(scope: TenantScope, sourceId: string, segNo: number): Promise<ChunkRecord[]> {
    const range = { from: keys.chunk(scope, sourceId, segNo * SEGMENT_SPAN).sk, to: keys.chunk(scope, sourceId, (segNo + 1) * SEGMENT_SPAN - 1).sk };
    return (await queryAll(keys.chunkPartition(scope, sourceId), range)).map(toChunk);
  }

  async function deleteChunks(scope: TenantScope, sourceId: string, docNos: number[]): Promise<void> {
    await batchWrite(docNos.map((n) => deleteRequest(keys.chunk(scope, sourceId, n))));
  }

  async function deleteSegmentItems(scope: TenantScope, sourceId: string, segNos: number[]): Promise<void> {
    await changingSegments(scope, sourceId, () => batchWrite(segNos.map((segNo) => deleteRequest(keys.segment(scope, sourceId, segNo)))));
  }

  /** Saves a compaction's plan unless one with its id exists; returns the one that holds. */
  async function beginCompaction(scope: TenantScope, sourceId: string, plan: CompactionRecord): Promise<CompactionRecord> {
    try {
      await db.client.send(new PutCommand({ TableName: db.table, Item: { ...keys.compaction(scope, sourceId, plan.compactionId), ...plan }, ConditionExpression: 'attribute_not_exists(pk)' }));
      return plan;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      return (await getCompaction(scope, sourceId, plan.compactionId))!;
    }
  }

  async function getCompaction(scope: TenantScope, sourceId: string, compactionId: string): Promise<CompactionRecord | undefined> {
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.compaction(scope, sourceId, compactionId), ConsistentRead: true }));
    return out.Item ? readItem(compactionShape, out.Item, 'compaction') : undefined;
  }

  async function setCompactionState(scope: TenantScope, sourceId: string, compactionId: string, state: CompactionRecord['state']): Promise<void> {
    await db.client.send(
      new UpdateCommand({ TableName: db.table, Key: keys.compaction(scope, sourceId, compactionId), UpdateExpression: 'SET #state = :state', ExpressionAttributeNames: { '#state': 'state' }, ExpressionAttributeValues: { ':state': state } }),
    );
  }

  /**
   * The swap, in one transaction: the new segments turn live with their sums, the old segment items
   * go (each only if unchanged since the plan), the plan records it. A search reads the segment
   * items once, so it sees either all old segments or all new ones: the same live chunks.
   * Returns false when an old segment changed (the plan is stale).
   */
  function swapSegments(
    scope: TenantScope,
    sourceId: string,
    plan: CompactionRecord,
    sums: SegmentSums[],
  ): Promise<boolean> {
    return changingSegments(scope, sourceId, () => swap(scope, sourceId, plan, sums));
  }

  async function swap(scope: TenantScope, sourceId: string, plan: CompactionRecord, sums: SegmentSums[]): Promise<boolean> {
    try {
      await db.client.send(
        new TransactWriteCommand({
          TransactItems: [
            ...sums.map((sum) => ({ Update: goLive(scope, sourceId, sum) })),
            ...plan.old.map((o) => ({
              Delete: { TableName: db.table, Key: keys.segment(scope, sourceId, o.segNo), ConditionExpression: 'version = :version', ExpressionAttributeValues: { ':version': o.version } },
            })),
            {
              Update: {
                TableName: db.table,
                Key: keys.compaction(scope, sourceId, plan.compactionId),
                UpdateExpression: 'SET #state = :swapped',
                ConditionExpression: '#state = :writing',
                ExpressionAttributeNames: { '#state': 'state' },
                ExpressionAttributeValues: { ':swapped': 'swapped', ':writing': 'writing' },
              },
            },
          ],
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof TransactionCanceledException) return false;
      throw error;
    }
  }

  /** The norms of the given live segments (format 2), from the cache where it has them. */
  /** Format-2 segments' norms, decoded (from the cache where it has them). */
  async function readNorms(scope: TenantScope, sourceId: string, segments: Array<{ segNo: number; size: number }>): Promise<Map<number, SegmentNorms>> {
    const found = new Map<number, SegmentNorms>();
    const missing = segments.filter(({ segNo }) => {
      const cached = cache.norms(scope, sourceId, segNo);
      if (cached) found.set(segNo, cached);
      return !cached;
    });
    if (missing.length === 0) return found;
    const issuedAt = clock.now();
    const firsts = await batchGet(missing.map(({ segNo }) => keys.norms(scope, sourceId, segNo)));
    // The parts after the first, of segments whose norms outgrew one item.
    const laterParts = (item: Record<string, unknown>) => Array.from({ length: Number(item.parts ?? 1) - 1 }, (_, i) => keys.norms(scope, sourceId, Number(item.segNo), i + 1));
    const later = new Map((await batchGet(firsts.flatMap(laterParts), { withKeys: true })).map((item) => [String(item.sk), toBytes(item.n)!]));
    const sizes = new Map(missing.map(({ segNo, size }) => [segNo, size]));
    for (const item of firsts) {
      const segNo = Number(item.segNo);
      const pieces = [toBytes(item.n)!, ...laterParts(item).map((key) => later.get(key.sk)!)];
      const norms = decodeNorms(pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces), sizes.get(segNo)!);
      found.set(segNo, norms);
      cache.keepNorms(scope, sourceId, segNo, norms, issuedAt);
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
    const issuedAt = clock.now();
    for (const item of await batchGet(missing.map((n) => keys.chunk(scope, sourceId, n)))) {
      const chunk = toChunk(item);
      found.set(chunk.docNo, chunk);
      cache.keepChunk(scope, sourceId, chunk, issuedAt);
    }
    return found;
  }

  async function listDocuments(scope: TenantScope, sourceId: string): Promise<DocumentRecord[]> {
    return (await queryAll(keys.documentPartition(scope, sourceId))).map(toDocument);
  }

  async function getDocuments(scope: TenantScope, sourceId: string, documentKeys: string[]): Promise<Map<string, DocumentRecord>> {
    const items = await batchGet(documentKeys.map((k) => keys.document(scope, sourceId, k)), { consistent: true });
    return new Map(items.map((item) => [String(item.documentKey), toDocument(item)]));
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

  /**
   * Removes a source's whole index: postings (found through the segments' term lists, and the
   * chunks' terms for segments older than term lists), chunks, documents, segments.
   */
  function purgeIndex(scope: TenantScope, sourceId: string): Promise<void> {
    return changingSegments(scope, sourceId, () => purge(scope, sourceId));
  }

  async function purge(scope: TenantScope, sourceId: string): Promise<void> {
    const chunks = await queryAll(keys.chunkPartition(scope, sourceId));
    const terms = new Set<string>();
    for (const chunk of chunks) for (const pair of ((chunk.terms as string | undefined) ?? '').split(' ')) if (pair) terms.add(pair.slice(0, pair.lastIndexOf(':')));
    const segments = await queryAll(keys.segmentPartition(scope, sourceId));
    for (const segment of segments) {
      const segNo = Number(segment.segNo);
      for (const term of await readTermList(scope, sourceId, segNo)) terms.add(term);
      await clearPartition(keys.segmentTermsPartition(scope, sourceId, segNo));
    }
    for (const term of terms) await clearPartition(keys.termPartition(scope, sourceId, term));
    for (const pk of [
      keys.normsPartition(scope, sourceId),
      keys.chunkPartition(scope, sourceId),
      keys.documentPartition(scope, sourceId),
      keys.segmentPartition(scope, sourceId),
      keys.sync(scope, sourceId, '').pk,
      keys.compaction(scope, sourceId, '').pk,
    ]) {
      await clearPartition(pk);
    }
    await batchWrite([deleteRequest(keys.segmentCounter(scope, sourceId))]);
  }
  // blockKey: where a term's posting block sorts, for a reader that skips blocks by their keys.
  return { blockKey: blockSortKey, decodedPostings: cache.decodedPostings, parsedChunk: cache.parsedChunk, forgetDocumentHashes, beginSegment, segmentWriter, writeDocuments, sealSegment, setChunkAccess, tombstone, readSegments, recentSegments, readTermItems, readTermBlocks, readNorms, deleteSegmentPostings, readSegmentChunks, deleteChunks, deleteSegmentItems, beginCompaction, getCompaction, setCompactionState, swapSegments, getChunks, listDocuments, getDocuments, reserveSegments, deleteDocuments, purgeIndex };
}

export type SearchIndexStore = ReturnType<typeof searchIndexStore>;
