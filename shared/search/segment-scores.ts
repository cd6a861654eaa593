import { lruCache } from '../store/lru-cache';
import { countPostingsV2, decodePostingsV2, forEachPosting, POSTINGS_FORMAT, type DecodedPostings } from '../store/postings-codec';
import { isDeleted } from '../store/search-index';
import { bm25fTermFrequency, termIdf, type CorpusStats, type RankParams } from './ranker';

/**
 * The fast path of ranking over stored segments: postings are decoded straight from their bytes
 * and scores accumulate in one Float64Array per segment (indexed by position), with no object per
 * posting. It computes exactly what `scoreBm25f` computes over decoded postings.
 */
export interface ScoredSegment {
  segNo: number;
  span: number;
  deleted?: Uint8Array;
  size: number;
  /** Postings format (postings-codec.ts); absent, format 1. */
  format?: number;
  /** Format 2: the chunks' field lengths, which its postings leave out. */
  norms?: { lenBody: Int32Array; lenTitle: Int32Array };
}

/** Postings in one term's bytes of a segment (format 2 counts them in its header). */
export function postingsIn(segment: ScoredSegment, bytes: Uint8Array): number {
  if (segment.format === POSTINGS_FORMAT) return countPostingsV2(bytes);
  let ends = 0;
  for (let i = 0; i < bytes.length; i++) if (bytes[i]! < 0x80) ends++;
  return ends / 5; // five varints a posting
}

/**
 * Decoded postings by the bytes they came from, per process: a query visits a term's postings
 * several times (its scores, the bounds of what is unread, each pass of RM3) and the next query
 * visits the same cached bytes again; decoding was the largest part of a search's CPU. About 12
 * bytes a posting (the bytes hold one or two), so the budget is a quarter of the index cache's
 * default; the bytes stay reachable from here only as long as their decoding does.
 */
const DECODED_BYTES = 16 * 1024 * 1024;
const decodedCache = lruCache<DecodedPostings, Uint8Array>(DECODED_BYTES);

function decoded(bytes: Uint8Array): DecodedPostings {
  let postings = decodedCache.get(bytes);
  if (!postings) {
    postings = decodePostingsV2(bytes);
    decodedCache.set(bytes, postings, 64 + bytes.length + postings.count * 12);
  }
  return postings;
}

export class SegmentScores {
  private readonly arrays = new Map<number, Float64Array>();
  private readonly tfPart: ReturnType<typeof bm25fTermFrequency>;

  constructor(
    private readonly segments: Map<number, ScoredSegment>,
    private readonly stats: CorpusStats,
    params: RankParams,
  ) {
    this.tfPart = bm25fTermFrequency(params, stats);
  }

  /** Adds `weight × idf × tf-part` of each live posting of one term (deleted chunks count in its df, as in Lucene). */
  addTerm(items: Array<{ segNo: number; bytes: Uint8Array }>, weight: number): void {
    let df = 0;
    for (const { segNo, bytes } of items) {
      const segment = this.segments.get(segNo);
      if (segment) df += postingsIn(segment, bytes);
    }
    if (df === 0 || this.stats.documents === 0) return;
    this.addPostings(items, termIdf(this.stats, df) * weight);
  }

  /** Adds `factor × tf-part` of each live posting (a term's idf and weight are in `factor`). */
  addPostings(items: Array<{ segNo: number; bytes: Uint8Array }>, factor: number): void {
    this.visitLive(items, (target, local, tfBody, tfTitle, lenBody, lenTitle) => {
      target[local]! += factor * this.tfPart(tfBody, tfTitle, lenBody, lenTitle);
    });
  }

  /** Adds `value` for each live posting: how much of an upper bound a chunk's seen terms account for. */
  addConstant(items: Array<{ segNo: number; bytes: Uint8Array }>, value: number): void {
    this.visitLive(items, (target, local) => {
      target[local]! += value;
    });
  }

  private visitLive(
    items: Array<{ segNo: number; bytes: Uint8Array }>,
    visit: (target: Float64Array, local: number, tfBody: number, tfTitle: number, lenBody: number, lenTitle: number) => void,
  ): void {
    for (const { segNo, bytes } of items) {
      const segment = this.segments.get(segNo);
      if (!segment) continue;
      let scores = this.arrays.get(segNo);
      if (!scores) this.arrays.set(segNo, (scores = new Float64Array(segment.size)));
      const { deleted, norms } = segment;
      const target = scores;
      const accept = (local: number, tfBody: number, tfTitle: number, lenBody: number, lenTitle: number) => {
        if (isDeleted(deleted, local)) return;
        if (local >= target.length) return; // a posting past the sealed size cannot happen; never write out of bounds
        visit(target, local, tfBody, tfTitle, lenBody, lenTitle);
      };
      if (segment.format !== POSTINGS_FORMAT) {
        forEachPosting(bytes, accept);
        continue;
      }
      if (!norms) throw new Error(`segment ${segNo}: format-2 postings without norms`);
      const { count, docs, tfBody, tfTitle } = decoded(bytes);
      for (let k = 0; k < count; k++) {
        const local = docs[k]!;
        accept(local, tfBody[k]!, tfTitle[k]!, norms.lenBody[local]!, norms.lenTitle[local]!);
      }
    }
  }

  /** A segment's scores by position (undefined when no posting of it was added). */
  scoresOf(segNo: number): Float64Array | undefined {
    return this.arrays.get(segNo);
  }

  /** The segments that have scores, with their chunk-number base. */
  *scoredSegments(): Generator<{ segNo: number; base: number; scores: Float64Array }> {
    for (const [segNo, scores] of this.arrays) yield { segNo, base: segNo * this.segments.get(segNo)!.span, scores };
  }

  scale(factor: number): void {
    for (const scores of this.arrays.values()) for (let i = 0; i < scores.length; i++) scores[i]! *= factor;
  }

  /** The k best chunks (ties: lower chunk number first, as `topDocs`). */
  top(k: number): Array<{ doc: number; score: number }> {
    const best: Array<{ doc: number; score: number }> = [];
    let floor = -Infinity;
    for (const [segNo, scores] of this.arrays) {
      const base = segNo * this.segments.get(segNo)!.span;
      for (let local = 0; local < scores.length; local++) {
        const score = scores[local]!;
        if (score <= 0 || score < floor) continue;
        best.push({ doc: base + local, score });
        if (best.length > k * 4) {
          best.sort((a, b) => b.score - a.score || a.doc - b.doc);
          best.length = k;
          floor = best[k - 1]!.score;
        }
      }
    }
    best.sort((a, b) => b.score - a.score || a.doc - b.doc);
    return best.slice(0, k);
  }
}
