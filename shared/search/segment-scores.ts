import { forEachPosting } from '../store/postings-codec';
import { bm25fTermFrequency, idf, type CorpusStats, type RankParams } from './ranker';

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

  /** Postings in a term's items (deleted chunks included, as Lucene's docFreq counts them). */
  static documentFrequency(items: Array<{ segNo: number; bytes: Uint8Array }>, live: (segNo: number) => boolean): number {
    let count = 0;
    for (const { segNo, bytes } of items) {
      if (!live(segNo)) continue;
      for (let i = 0; i < bytes.length; i++) if (bytes[i]! < 0x80) count++;
    }
    return count / 5; // five varints a posting
  }

  /** Adds `weight × idf × tf-part` of each live posting of one term. */
  addTerm(items: Array<{ segNo: number; bytes: Uint8Array }>, weight: number): void {
    const df = SegmentScores.documentFrequency(items, (segNo) => this.segments.has(segNo));
    if (df === 0 || this.stats.documents === 0) return;
    const factor = idf(this.stats.documents, df) * weight;
    for (const { segNo, bytes } of items) {
      const segment = this.segments.get(segNo);
      if (!segment) continue;
      let scores = this.arrays.get(segNo);
      if (!scores) this.arrays.set(segNo, (scores = new Float64Array(segment.size)));
      const deleted = segment.deleted;
      const target = scores;
      forEachPosting(bytes, (local, tfBody, tfTitle, lenBody, lenTitle) => {
        if (deleted && local >> 3 < deleted.length && (deleted[local >> 3]! & (1 << (local % 8))) !== 0) return;
        if (local >= target.length) return; // a posting past the sealed size cannot happen; never write out of bounds
        target[local]! += factor * this.tfPart(tfBody, tfTitle, lenBody, lenTitle);
      });
    }
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
