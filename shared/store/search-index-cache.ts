import type { TenantScope } from '../tenancy';
import { lruCache } from './lru-cache';
import { decodePostingsV2, type DecodedPostings, type SegmentNorms } from './postings-codec';

/**
 * One term's directory items, one per segment that has the term: its postings inline, or (with
 * `count`, the postings it has in blocks) the directory of its blocks.
 */
export type TermItems = Array<{ segNo: number; bytes: Uint8Array; count?: number }>;

/** What the cache needs of a chunk (the search index's ChunkRecord). */
interface CachedChunk {
  docNo: number;
  title: string;
  text: string;
  terms: string;
  metadata?: Record<string, unknown>;
  vector?: { v: Uint8Array };
}

/**
 * The search index's items that can no longer change, kept in this process between searches: a
 * live segment's postings and chunks are final (a batch writes them before its segment turns live,
 * and nothing rewrites them after). What a read returned is kept only for segments this process
 * saw live, in a segments read that finished SETTLED_MS before the read was issued: such a read
 * cannot have run before the items were written, nor (eventual consistency) seen an older write.
 * A term's entry records which segments it is complete for, so a search whose live segments it
 * does not cover (a segment went live since) reads the term again.
 */
const SETTLED_MS = 5000;
/** Per process by default (SEARCH_CACHE_MB); a Lambda instance has 1 GB, the local server shares its machine. */
const MAX_BYTES = 64 * 1024 * 1024;

interface TermEntry {
  items: TermItems;
  complete: Set<number>;
}

export function searchIndexCache<Chunk extends CachedChunk>(segmentOf: (docNo: number) => number, maxBytes = MAX_BYTES) {
  const cache = lruCache<TermEntry | Chunk | Map<number, number> | SegmentNorms>(maxBytes);
  const source = (scope: TenantScope, sourceId: string) => `${scope.tenantId}#${scope.schema}#${sourceId}`;

  /** When this process first saw each of the source's segments live. */
  const liveSince = (scope: TenantScope, sourceId: string): Map<number, number> => {
    const key = `L#${source(scope, sourceId)}`;
    let seen = cache.get(key) as Map<number, number> | undefined;
    if (!seen) {
      seen = new Map();
      cache.set(key, seen, 64);
    }
    return seen;
  };
  /** Whether a read issued at `issuedAt` can only have seen a segment's final items. */
  const settledFor = (scope: TenantScope, sourceId: string, segNo: number, issuedAt: number) => {
    const liveAt = liveSince(scope, sourceId).get(segNo);
    return liveAt !== undefined && liveAt <= issuedAt - SETTLED_MS;
  };
  const settledBy = (scope: TenantScope, sourceId: string, issuedAt: number) => {
    const settled = new Set<number>();
    for (const [segNo, at] of liveSince(scope, sourceId)) if (at <= issuedAt - SETTLED_MS) settled.add(segNo);
    return settled;
  };

  // Decoded postings, by the bytes they came from: a query visits a term's postings several times
  // (its scores, the bounds of what is unread, each pass of RM3) and the next query the same
  // cached bytes; decoding was the largest part of a search's CPU. About 20 bytes a posting
  // (12 decoded, 8 of the tf-parts ranking keeps beside them) where the bytes hold one or two, so
  // a quarter of the budget; the oldest go first (reordering the map on every hit cost more than
  // it saved).
  const decoded = new Map<Uint8Array, DecodedPostings>();
  let decodedBytes = 0;
  const decodedSize = (bytes: Uint8Array, postings: DecodedPostings) => 64 + bytes.length + postings.count * 20;

  // What ranking parses of a kept chunk (its stored term frequencies), kept beside it: a kept chunk
  // serves many searches, and each that ranks it read its terms again (RM3's feedback, exact
  // scoring: 7% of a search's CPU). Weakly held: it goes when the chunk does.
  const parsedChunks = new WeakMap<Chunk, { parse: unknown; parsed: unknown }>();

  return {
    /** `parse(chunk)`, once per chunk object (the last parse asked for: ranking asks for one). */
    parsedChunk: <T>(chunk: Chunk, parse: (chunk: Chunk) => T): T => {
      const kept = parsedChunks.get(chunk);
      if (kept?.parse === parse) return kept.parsed as T;
      const parsed = parse(chunk);
      parsedChunks.set(chunk, { parse, parsed });
      return parsed;
    },

    decodedPostings: (bytes: Uint8Array): DecodedPostings => {
      let postings = decoded.get(bytes);
      if (postings) return postings;
      postings = decodePostingsV2(bytes);
      decoded.set(bytes, postings);
      decodedBytes += decodedSize(bytes, postings);
      for (const [oldBytes, old] of decoded) {
        if (decodedBytes <= maxBytes / 4) break;
        decoded.delete(oldBytes);
        decodedBytes -= decodedSize(oldBytes, old);
      }
      return postings;
    },

    observeLive(scope: TenantScope, sourceId: string, segNos: number[], at: number) {
      const seen = liveSince(scope, sourceId);
      for (const segNo of segNos) if (!seen.has(segNo)) seen.set(segNo, at);
    },

    /** A term's postings in the given live segments, when the cache holds all of them. */
    termItems(scope: TenantScope, sourceId: string, term: string, live: number[]): TermItems | undefined {
      const entry = cache.get(`T#${source(scope, sourceId)}#${term}`) as TermEntry | undefined;
      if (!entry || !live.every((segNo) => entry.complete.has(segNo))) return undefined;
      return entry.items;
    },

    /** Keeps what a Query of a term's postings (issued at `issuedAt`) says of settled segments. */
    keepTermItems(scope: TenantScope, sourceId: string, term: string, items: TermItems, issuedAt: number) {
      const complete = settledBy(scope, sourceId, issuedAt);
      if (complete.size === 0) return;
      const kept = items.filter((item) => complete.has(item.segNo));
      const bytes = 64 + term.length + complete.size * 8 + kept.reduce((n, item) => n + item.bytes.length + 16, 0);
      cache.set(`T#${source(scope, sourceId)}#${term}`, { items: kept, complete }, bytes);
    },

    /**
     * A live segment's norms (they never change once it is live), decoded: every search of the
     * source needs all of them, and decoding a large segment's each time cost more than scoring.
     */
    norms(scope: TenantScope, sourceId: string, segNo: number): SegmentNorms | undefined {
      return cache.get(`N#${source(scope, sourceId)}#${segNo}`) as SegmentNorms | undefined;
    },

    keepNorms(scope: TenantScope, sourceId: string, segNo: number, norms: SegmentNorms, issuedAt: number) {
      if (!settledFor(scope, sourceId, segNo, issuedAt)) return;
      cache.set(`N#${source(scope, sourceId)}#${segNo}`, norms, 64 + norms.lenBody.byteLength + norms.lenTitle.byteLength);
    },

    chunk(scope: TenantScope, sourceId: string, docNo: number): Chunk | undefined {
      return cache.get(`C#${source(scope, sourceId)}#${docNo}`) as Chunk | undefined;
    },

    keepChunk(scope: TenantScope, sourceId: string, chunk: Chunk, issuedAt: number) {
      if (!settledFor(scope, sourceId, segmentOf(chunk.docNo), issuedAt)) return;
      const bytes = 128 + chunk.text.length * 2 + chunk.terms.length * 2 + chunk.title.length * 2 + JSON.stringify(chunk.metadata ?? {}).length + (chunk.vector?.v.byteLength ?? 0);
      cache.set(`C#${source(scope, sourceId)}#${chunk.docNo}`, chunk, bytes);
    },
  };
}
