import { countPostingsV2, decodePostingsV2, forEachPosting, POSTINGS_FORMAT, type DecodedPostings, type SegmentNorms } from '../store/postings-codec';
import { isDeleted } from '../store/search-index';
import { bm25fTermFrequency, termFrequencyKey, termIdf, type CorpusStats, type RankParams } from './ranker';

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
  norms?: SegmentNorms;
}

/** Postings in one term's bytes of a segment (format 2 counts them in its header). */
export function postingsIn(segment: ScoredSegment, bytes: Uint8Array): number {
  if (segment.format === POSTINGS_FORMAT) return countPostingsV2(bytes);
  let ends = 0;
  for (let i = 0; i < bytes.length; i++) if (bytes[i]! < 0x80) ends++;
  return ends / 5; // five varints a posting
}

/** What scoring one item of a term needs: its segment's score array and deletions, and its postings decoded (format 2). */
interface LiveItem {
  target: Float64Array;
  deleted: Uint8Array | undefined;
  norms: SegmentNorms;
  postings: DecodedPostings;
}

export class SegmentScores {
  private readonly arrays = new Map<number, Float64Array>();
  private readonly tfPart: ReturnType<typeof bm25fTermFrequency>;
  private readonly tfKey: string;

  constructor(
    private readonly segments: Map<number, ScoredSegment>,
    private readonly stats: CorpusStats,
    params: RankParams,
    /** Format-2 postings as arrays: the index's cache of them, or decoding each time. */
    private readonly decoded: (bytes: Uint8Array) => DecodedPostings = decodePostingsV2,
  ) {
    this.tfPart = bm25fTermFrequency(params, stats);
    this.tfKey = termFrequencyKey(params, stats);
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
    const tfPart = this.tfPart;
    for (const item of items) {
      const live = this.liveItem(item, (target, local, tfBody, tfTitle, lenBody, lenTitle) => {
        target[local]! += factor * tfPart(tfBody, tfTitle, lenBody, lenTitle);
      });
      if (!live) continue;
      // Format 2, the hot path: one loop over the decoded arrays and their kept tf-parts.
      const { target, deleted, norms, postings } = live;
      const { count, docs } = postings;
      const parts = this.tfPartsOf(postings, norms);
      for (let k = 0; k < count; k++) {
        const local = docs[k]!;
        if (local >= target.length || isDeleted(deleted, local)) continue;
        target[local]! += factor * parts[k]!;
      }
    }
  }

  /**
   * Each posting's tf-part under this ranking's statistics, kept on the decoded postings: the index
   * keeps those between queries, and a term's tf-parts change only when the source's statistics
   * do, while computing them was most of scoring's time. The same arithmetic, so the same scores.
   */
  private tfPartsOf(postings: DecodedPostings, norms: SegmentNorms): Float64Array {
    if (postings.tfParts?.key === this.tfKey) return postings.tfParts.values;
    const { count, docs, tfBody, tfTitle } = postings;
    const { lenBody, lenTitle } = norms;
    const values = new Float64Array(count);
    for (let k = 0; k < count; k++) {
      const local = docs[k]!;
      // A posting past the sealed size is skipped by every caller; it has no norms to score with.
      if (local < lenBody.length) values[k] = this.tfPart(tfBody[k]!, tfTitle[k]!, lenBody[local]!, lenTitle[local]!);
    }
    postings.tfParts = { key: this.tfKey, values };
    return values;
  }

  /** Adds `value` for each live posting: how much of an upper bound a chunk's seen terms account for. */
  addConstant(items: Array<{ segNo: number; bytes: Uint8Array }>, value: number): void {
    for (const item of items) {
      const live = this.liveItem(item, (target, local) => {
        target[local]! += value;
      });
      if (!live) continue;
      const { target, deleted, postings } = live;
      const { count, docs } = postings;
      for (let k = 0; k < count; k++) {
        const local = docs[k]!;
        if (local >= target.length || isDeleted(deleted, local)) continue;
        target[local]! += value;
      }
    }
  }

  /**
   * One term's item of a live segment, with the segment's score array. Format-1 postings (older
   * segments) are visited here, through `visitFormat1`, and leave nothing for the caller.
   * Postings past the sealed size cannot happen; they are skipped so nothing writes out of bounds.
   */
  private liveItem(
    { segNo, bytes }: { segNo: number; bytes: Uint8Array },
    visitFormat1: (target: Float64Array, local: number, tfBody: number, tfTitle: number, lenBody: number, lenTitle: number) => void,
  ): LiveItem | undefined {
    const segment = this.segments.get(segNo);
    if (!segment) return undefined;
    let target = this.arrays.get(segNo);
    if (!target) this.arrays.set(segNo, (target = new Float64Array(segment.size)));
    const { deleted, norms } = segment;
    if (segment.format !== POSTINGS_FORMAT) {
      const scores = target;
      forEachPosting(bytes, (local, tfBody, tfTitle, lenBody, lenTitle) => {
        if (local < scores.length && !isDeleted(deleted, local)) visitFormat1(scores, local, tfBody, tfTitle, lenBody, lenTitle);
      });
      return undefined;
    }
    if (!norms) throw new Error(`segment ${segNo}: format-2 postings without norms`);
    return { target, deleted, norms, postings: this.decoded(bytes) };
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
