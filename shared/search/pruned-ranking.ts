import { decodeDirectory, type DecodedPostings, type Envelope } from '../store/postings-codec';
import type { ChunkRecord, TermBlock, TermItems } from '../store/search-index';
import { envelopeBound } from './impact-blocks';
import { indexTuning } from './index-tuning';
import type { StoredFrequencies } from './indexing';
import { bm25fTermFrequency, termIdf, type CorpusStats, type RankParams } from './ranker';
import { postingsIn, SegmentScores, type ScoredSegment } from './segment-scores';

/**
 * Top-k ranking that reads postings in impact order and stops when nothing unread can change the
 * answer (a score-at-a-time relative of MaxScore, over DynamoDB's items).
 *
 * What is known of each term: postings stored inline, blocks read so far, and, from the
 * directories, the envelope of every block not yet read, hence an exact upper bound of what it
 * can add with today's statistics. After each wave of reads:
 * - `L[d]` sums the contributions read of chunk d, in the same order as the exhaustive scorer, so
 *   a chunk whose postings are all read has exactly the exhaustive score;
 * - `M` bounds what unread blocks can add to a chunk (the sum over terms of their best unread
 *   block), and `S[d]` the part of `M` that chunk d cannot receive (terms it was already seen in);
 * - with `θ` the k-th best `L`: a chunk with `L + M − S < θ` cannot enter the top k, nor can a chunk
 *   seen in no read block once `M < θ`. The few chunks left whose score is still open are scored
 *   exactly from their stored term vectors (they are fetched for the answer anyway).
 * Otherwise the next wave reads the blocks that lower `M` most per block read. After a few waves it
 * reads what is left, so the number of requests stays bounded by the query's length.
 */
export interface IndexReader {
  directories(terms: string[]): Promise<Map<string, TermItems>>;
  blocks(term: string, after: string | undefined, limit?: number): Promise<{ blocks: TermBlock[]; last?: string }>;
  chunks(docNos: number[]): Promise<Map<number, ChunkRecord>>;
  blockKey(block: { impact: number; segNo: number; index: number }): string;
  /** Format-2 postings decoded (visited several times a query: the index keeps them decoded). */
  postings: (bytes: Uint8Array) => DecodedPostings;
  /** A chunk's stored terms parsed (read by every search that ranks it: the index keeps them parsed). */
  terms: (chunk: ChunkRecord) => StoredFrequencies;
}

/** One weighted term of a query. */
export interface Entry {
  term: string;
  weight: number;
}

/**
 * One ranking: `original` terms, then (RM3's second pass) the sum scaled by `scale` and the
 * `feedback` terms added, exactly as the exhaustive scorer does it.
 */
export interface Pass {
  original: Entry[];
  scale?: number;
  feedback: Entry[];
  k: number;
}

interface TermState {
  df: number;
  known: Array<{ segNo: number; bytes: Uint8Array }>;
  /** Blocks of live segments not read yet, in sort-key (read) order. */
  unread: Array<{ sk: string; env: Envelope }>;
  after?: string;
}

/** Waves of block reads before the rest is read at once. */
const MAX_WAVES = 3;
/**
 * Stopping early needs the sum of every unread term's best block under the k-th score: with more
 * terms left to read than this it practically never happens (measured on CISI's long questions),
 * and each extra wave costs a request per term; such a pass reads what is left at once instead,
 * which costs what the exhaustive ranking costs.
 */
const MAX_PRUNED_TERMS = 6;

/** Relative slack on every comparison of bounds: sums in another order differ in the last bits. */
const EPS = 1e-9;

export class PrunedRanker {
  private readonly terms = new Map<string, TermState>();
  private readonly tfPart: ReturnType<typeof bm25fTermFrequency>;
  readonly chunks = new Map<number, ChunkRecord>();
  /** What the ranking read, for the trace and the bench. */
  readonly counts = { waves: 0, blocksRead: 0, exactlyScored: 0, cpuMs: 0 };

  constructor(
    private readonly reader: IndexReader,
    private readonly live: Map<number, ScoredSegment>,
    private readonly stats: CorpusStats,
    private readonly params: RankParams,
    private readonly exhaustive = false,
  ) {
    this.tfPart = bm25fTermFrequency(params, stats);
  }

  /** Reads the directories of terms not read yet (one Query each, in parallel). */
  async load(terms: string[]): Promise<void> {
    const missing = [...new Set(terms)].filter((t) => !this.terms.has(t));
    if (missing.length === 0) return;
    const directories = await this.reader.directories(missing);
    for (const term of missing) {
      const state: TermState = { df: 0, known: [], unread: [] };
      for (const item of directories.get(term) ?? []) {
        const segment = this.live.get(item.segNo);
        if (!segment) continue;
        if (item.count === undefined) {
          state.df += postingsIn(segment, item.bytes);
          state.known.push(item);
          continue;
        }
        state.df += item.count;
        decodeDirectory(item.bytes).forEach(({ impact, env }, index) => state.unread.push({ sk: this.reader.blockKey({ impact, segNo: item.segNo, index }), env }));
      }
      state.unread.sort((a, b) => (a.sk < b.sk ? -1 : 1));
      this.terms.set(term, state);
    }
    if (this.exhaustive) await this.readWhole(missing.filter((t) => this.terms.get(t)!.unread.length > 0));
  }

  /**
   * The exact top k of a pass (score descending, then chunk number), as the exhaustive scorer
   * ranks it. `readAll`: a later pass reads every block of these terms anyway (RM3's second pass
   * does), so stopping early could only add requests.
   */
  async rank(pass: Pass, options: { readAll?: boolean } = {}): Promise<Array<{ doc: number; score: number }>> {
    const terms = [...pass.original, ...pass.feedback].map((e) => e.term);
    await this.load(terms);
    const open = [...new Set(terms)].filter((t) => (this.terms.get(t)?.unread.length ?? 0) > 0);
    // A term with few blocks left costs one read unit or so in one Query, and more in several.
    const big = new Set(open.filter((t) => this.terms.get(t)!.unread.length > indexTuning.pruneFromBlocks));
    const now = options.readAll || big.size > MAX_PRUNED_TERMS ? open : open.filter((t) => !big.has(t));
    if (now.length > 0) await this.readWhole(now);
    for (let wave = 0; ; wave++) {
      const t0 = performance.now();
      const state = this.evaluate(pass);
      const top = state.L.top(pass.k);
      const theta = top.length === pass.k ? top[pass.k - 1]!.score : 0;
      this.counts.cpuMs += performance.now() - t0;
      const done = await this.finish(pass, state, top, theta);
      if (done) return done;
      this.counts.waves++;
      if (wave >= MAX_WAVES) await this.readWhole([...this.terms].filter(([, s]) => s.unread.length > 0).map(([t]) => t));
      else await this.read(this.plan(state, theta));
    }
  }

  /** Reads every block left of these terms. */
  private readWhole(terms: string[]): Promise<void> {
    return this.read(new Map(terms.map((t) => [t, undefined])));
  }

  /** Reads blocks: a number per term, or all that are left (undefined). */
  private async read(plan: Map<string, number | undefined>): Promise<void> {
    await Promise.all(
      [...plan].map(async ([term, limit]) => {
        const state = this.terms.get(term)!;
        const { blocks, last } = await this.reader.blocks(term, state.after, limit);
        state.after = last;
        for (const block of blocks) {
          if (!this.live.has(block.segNo)) continue;
          state.known.push(block);
          this.counts.blocksRead++;
        }
        if (limit === undefined) state.unread = [];
        else if (last !== undefined) state.unread = state.unread.filter((u) => u.sk > last);
      }),
    );
  }

  /** L, S and M (see above) from what is read. */
  private evaluate(pass: Pass) {
    const L = new SegmentScores(this.live, this.stats, this.params, this.reader.postings);
    const S = new SegmentScores(this.live, this.stats, this.params, this.reader.postings);
    const open: Array<{ known: TermState['known']; bound: number; factor: number; unread: TermState['unread'] }> = [];
    /** Per term: what an unread block's tf-part is multiplied by (both passes' weights, scaled). */
    const factors = new Map<string, number>();
    const stage = (entries: Entry[], scale: number) => {
      for (const { term, weight } of entries) {
        const state = this.terms.get(term);
        if (!state || state.df === 0 || this.stats.documents === 0) continue;
        const factor = termIdf(this.stats, state.df) * weight;
        L.addPostings(state.known, factor);
        if (state.unread.length === 0) continue;
        factors.set(term, (factors.get(term) ?? 0) + factor * scale);
        let best = 0;
        for (const u of state.unread) best = Math.max(best, envelopeBound(this.tfPart, u.env));
        open.push({ known: state.known, bound: factor * scale * best, factor: factor * scale, unread: state.unread });
      }
    };
    stage(pass.original, pass.scale ?? 1);
    if (pass.scale !== undefined) L.scale(pass.scale);
    stage(pass.feedback, 1);
    let M = 0;
    for (const { known, bound } of open) {
      S.addConstant(known, bound);
      M += bound;
    }
    return { L, S, M, factors, open };
  }

  private async finish(
    pass: Pass,
    state: ReturnType<PrunedRanker['evaluate']>,
    top: Array<{ doc: number; score: number }>,
    theta: number,
  ): Promise<Array<{ doc: number; score: number }> | undefined> {
    const { L, S, M } = state;
    // Nothing unread: every chunk's score is complete.
    if (M === 0) return top;
    if (theta <= 0 || M >= theta * (1 - EPS)) return undefined;
    const candidates: Array<{ doc: number; segNo: number; local: number; lower: number; open: boolean }> = [];
    for (const { segNo, base, scores } of L.scoredSegments()) {
      const seen = S.scoresOf(segNo);
      for (let local = 0; local < scores.length; local++) {
        const lower = scores[local]!;
        if (lower <= 0) continue;
        const gap = M - (seen?.[local] ?? 0);
        if (lower + gap < theta * (1 - EPS)) continue;
        candidates.push({ doc: base + local, segNo, local, lower, open: gap > 0 });
      }
    }
    const open = this.refine(candidates.filter((c) => c.open), state.open, theta).map((c) => c.doc);
    if (open.length > Math.max(2 * pass.k, 40)) return undefined;
    await this.fetch(open);
    this.counts.exactlyScored += open.length;
    const scored = candidates.map((c) => ({ doc: c.doc, score: c.open ? this.exactScore(pass, c.doc, c.lower) : c.lower }));
    return scored
      .filter((d) => d.score > 0)
      .sort((a, b) => b.score - a.score || a.doc - b.doc)
      .slice(0, pass.k);
  }

  /**
   * Open candidates with a tighter bound: for each term a chunk was not seen in, the most an unread
   * block of it can add to *this* chunk, with the chunk's own field lengths (the norms) instead of
   * the shortest in the block. Those that still reach θ stay open.
   */
  private refine(
    candidates: Array<{ doc: number; segNo: number; local: number; lower: number }>,
    open: ReturnType<PrunedRanker['evaluate']>['open'],
    theta: number,
  ): Array<{ doc: number }> {
    if (candidates.length === 0) return candidates;
    const seen = open.map(({ known }) => {
      const marks = new SegmentScores(this.live, this.stats, this.params, this.reader.postings);
      marks.addConstant(known, 1);
      return marks;
    });
    const envelopes = open.map(({ unread }) => {
      // Distinct frequency pairs: the bound for given lengths is the best of them.
      const pairs = new Map<string, [number, number]>();
      for (const { env } of unread) pairs.set(`${env.tfBody}:${env.tfTitle}`, [env.tfBody, env.tfTitle]);
      return [...pairs.values()];
    });
    return candidates.filter(({ segNo, local, lower }) => {
      const norms = this.live.get(segNo)!.norms;
      if (!norms) return true; // format 1: no lengths at hand
      const lenBody = norms.lenBody[local]!;
      const lenTitle = norms.lenTitle[local]!;
      let bound = lower;
      open.forEach(({ factor }, e) => {
        if ((seen[e]!.scoresOf(segNo)?.[local] ?? 0) > 0) return;
        let best = 0;
        for (const [tfBody, tfTitle] of envelopes[e]!) best = Math.max(best, this.tfPart(tfBody, lenTitle > 0 ? tfTitle : 0, lenBody, lenTitle));
        bound += factor * best;
      });
      return bound >= theta * (1 - EPS);
    });
  }

  /**
   * Which blocks the next wave reads: repeatedly, the term whose next step down (the blocks down to
   * its next lower bound) lowers M most per block, until M would pass under θ's estimate; at least
   * one block of the best term.
   */
  private plan({ M, factors }: ReturnType<PrunedRanker['evaluate']>, target: number): Map<string, number> {
    const cursors = [...factors].map(([term, factor]) => {
      const state = this.terms.get(term)!;
      const bounds = state.unread.map((u) => factor * envelopeBound(this.tfPart, u.env));
      // suffix maxima: what stays unread after reading the first i blocks
      const rest = new Float64Array(bounds.length + 1);
      for (let i = bounds.length - 1; i >= 0; i--) rest[i] = Math.max(rest[i + 1]!, bounds[i]!);
      return { term, rest, at: 0 };
    });
    const plan = new Map<string, number>();
    let m = M;
    let budget = Math.max(8, this.counts.blocksRead, Math.ceil(cursors.reduce((n, c) => n + c.rest.length - 1, 0) / 4));
    while (budget > 0 && (m >= target * 0.5 || plan.size === 0)) {
      let best: { c: (typeof cursors)[number]; to: number; gain: number } | undefined;
      for (const c of cursors) {
        if (c.at >= c.rest.length - 1) continue;
        let to = c.at + 1;
        while (to < c.rest.length - 1 && c.rest[to]! >= c.rest[c.at]! * (1 - EPS)) to++;
        const gain = (c.rest[c.at]! - c.rest[to]!) / (to - c.at);
        if (!best || gain > best.gain) best = { c, to, gain };
      }
      if (!best) break;
      m -= best.c.rest[best.c.at]! - best.c.rest[best.to]!;
      budget -= best.to - best.c.at;
      best.c.at = best.to;
      plan.set(best.c.term, best.c.at);
    }
    return plan;
  }

  /** Fetches chunks not fetched yet (they stay in `chunks`). */
  async fetch(docNos: number[]): Promise<void> {
    const missing = docNos.filter((n) => !this.chunks.has(n));
    if (missing.length > 0) for (const [n, c] of await this.reader.chunks(missing)) this.chunks.set(n, c);
  }

  /** A chunk's exact score from its stored terms, summed in the exhaustive scorer's order. */
  private exactScore(pass: Pass, doc: number, lower: number): number {
    const chunk = this.chunks.get(doc);
    if (!chunk) return lower; // removed meanwhile: what was read is all there is
    const { titleTf, bodyTf } = this.reader.terms(chunk);
    let score = 0;
    const stage = (entries: Entry[]) => {
      for (const { term, weight } of entries) {
        const state = this.terms.get(term);
        const tfBody = bodyTf.get(term) ?? 0;
        const tfTitle = titleTf.get(term) ?? 0;
        if (!state || state.df === 0 || (tfBody === 0 && tfTitle === 0)) continue;
        score += termIdf(this.stats, state.df) * weight * this.tfPart(tfBody, tfTitle, chunk.lenBody, chunk.lenTitle);
      }
    };
    stage(pass.original);
    if (pass.scale !== undefined) score *= pass.scale;
    stage(pass.feedback);
    return score;
  }

  /** Blocks listed but never read: what stopping early saved. */
  skipped(): number {
    let n = 0;
    for (const state of this.terms.values()) n += state.unread.length;
    return n;
  }
}
