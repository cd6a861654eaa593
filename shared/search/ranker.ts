/**
 * Ranking: BM25F over two fields (title/headings and body) with pseudo-relevance feedback (RM3).
 * Pure functions over postings, so the DynamoDB-backed index and the offline evaluation rank
 * identically. Parameters are general defaults, not fitted to any query.
 */

/** One chunk's entry in a term's postings. */
import type { Posting } from '../store/postings-codec';

export type { Posting };

export interface CorpusStats {
  documents: number;
  totalBodyLength: number;
  totalTitleLength: number;
  /**
   * Chunks the postings hold, deleted ones included (Lucene's docCount before a merge): what idf
   * compares a term's document frequency with, since that counts deleted chunks too. Without it,
   * a term in every chunk of a source with deletions had a negative idf. Defaults to `documents`.
   */
  indexed?: number;
}

export interface RankParams {
  k1: number;
  bBody: number;
  bTitle: number;
  titleWeight: number;
  /** Pseudo-relevance feedback: documents and terms taken, and the original query's share. */
  feedbackDocs: number;
  feedbackTerms: number;
  originalWeight: number;
}

export const DEFAULT_RANK_PARAMS: RankParams = {
  k1: 1.2,
  bBody: 0.75,
  bTitle: 0.5,
  titleWeight: 2,
  feedbackDocs: 10,
  feedbackTerms: 20,
  originalWeight: 0.6,
};

/** Robertson–Sparck Jones idf as Lucene computes it (never negative). */
export function idf(documents: number, df: number): number {
  return Math.log(1 + (documents - df + 0.5) / (df + 0.5));
}

/** A term's idf in a corpus: df and the chunk count on the same footing (see CorpusStats.indexed). */
export function termIdf(stats: CorpusStats, df: number): number {
  return idf(Math.max(stats.indexed ?? stats.documents, df), df);
}

/** Query term → weight (repeated query terms count more, as in Lucene). */
export type WeightedQuery = Map<string, number>;

/** What `bm25fTermFrequency`'s values depend on besides a posting's own numbers: equal keys, equal tf-parts. */
export const termFrequencyKey = (params: RankParams, stats: CorpusStats): string =>
  `${params.k1}|${params.bBody}|${params.bTitle}|${params.titleWeight}|${stats.documents}|${stats.totalBodyLength}|${stats.totalTitleLength}`;

/**
 * The BM25F contribution of one posting, before the term's idf and query weight: field
 * frequencies normalised by field length, combined, then saturated.
 */
export function bm25fTermFrequency(
  params: RankParams,
  stats: CorpusStats,
): (tfBody: number, tfTitle: number, lenBody: number, lenTitle: number) => number {
  const avgBody = stats.totalBodyLength / stats.documents || 1;
  const avgTitle = stats.totalTitleLength / stats.documents || 1;
  const { k1, bBody, bTitle, titleWeight } = params;
  return (tfBody, tfTitle, lenBody, lenTitle) => {
    const body = tfBody / (1 - bBody + (bBody * lenBody) / avgBody);
    const title = lenTitle > 0 ? tfTitle / (1 - bTitle + (bTitle * lenTitle) / avgTitle) : 0;
    const tf = body + titleWeight * title;
    return (tf * (k1 + 1)) / (tf + k1);
  };
}

export function scoreBm25f(
  query: WeightedQuery,
  postings: Map<string, Posting[]>,
  stats: CorpusStats,
  params: RankParams = DEFAULT_RANK_PARAMS,
): Map<number, number> {
  const scores = new Map<number, number>();
  if (stats.documents === 0) return scores;
  const tfPart = bm25fTermFrequency(params, stats);
  for (const [term, weight] of query) {
    const list = postings.get(term);
    if (!list || list.length === 0) continue;
    const factor = termIdf(stats, list.length) * weight;
    for (const p of list) {
      scores.set(p.doc, (scores.get(p.doc) ?? 0) + factor * tfPart(p.tfBody, p.tfTitle, p.lenBody, p.lenTitle));
    }
  }
  return scores;
}

export function topDocs(scores: Map<number, number>, k: number): Array<{ doc: number; score: number }> {
  // Ties break on the document number, so equal scores always rank the same way.
  return [...scores]
    .map(([doc, score]) => ({ doc, score }))
    .sort((a, b) => b.score - a.score || a.doc - b.doc)
    .slice(0, k);
}

/** A chunk's terms with their frequencies (both fields), for feedback. */
export interface TermVector {
  doc: number;
  terms: ReadonlyMap<string, number>;
  length: number;
}

/**
 * RM3 as a change of weights: the expanded query is `scale × original query + feedback terms`, so
 * scores of the first pass can be scaled and only the feedback terms' postings scored again.
 */
export interface Expansion {
  scale: number;
  feedback: WeightedQuery;
}

/**
 * RM3: a relevance model estimated from the top documents (term probability in each document,
 * weighted by that document's normalised score), interpolated with the original query.
 */
export function rm3(
  query: WeightedQuery,
  top: Array<{ doc: number; score: number }>,
  vectors: Map<number, TermVector>,
  params: RankParams = DEFAULT_RANK_PARAMS,
): Expansion {
  const feedback = top.slice(0, params.feedbackDocs).filter((d) => vectors.has(d.doc));
  if (feedback.length === 0 || params.feedbackTerms === 0) return { scale: 1, feedback: new Map() };
  const maxScore = feedback[0]!.score;
  const docWeights = feedback.map((d) => Math.exp(d.score - maxScore));
  const totalDocWeight = docWeights.reduce((a, b) => a + b, 0);
  const model = new Map<string, number>();
  feedback.forEach((d, i) => {
    const vector = vectors.get(d.doc)!;
    for (const [term, tf] of vector.terms) {
      model.set(term, (model.get(term) ?? 0) + (docWeights[i]! / totalDocWeight) * (tf / vector.length));
    }
  });
  const chosen = [...model].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, params.feedbackTerms);
  const chosenTotal = chosen.reduce((s, [, w]) => s + w, 0) || 1;
  const queryTotal = [...query.values()].reduce((a, b) => a + b, 0) || 1;
  return {
    scale: params.originalWeight / queryTotal,
    feedback: new Map(chosen.map(([term, w]) => [term, ((1 - params.originalWeight) * w) / chosenTotal])),
  };
}

/** The expanded query as one weighted query (the offline harness scores it in one pass). */
export function expandQuery(
  query: WeightedQuery,
  top: Array<{ doc: number; score: number }>,
  vectors: Map<number, TermVector>,
  params: RankParams = DEFAULT_RANK_PARAMS,
): WeightedQuery {
  const { scale, feedback } = rm3(query, top, vectors, params);
  const expanded: WeightedQuery = new Map();
  for (const [term, w] of query) expanded.set(term, scale * w);
  for (const [term, w] of feedback) expanded.set(term, (expanded.get(term) ?? 0) + w);
  return expanded;
}
