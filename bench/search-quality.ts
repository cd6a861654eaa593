/**
 * Offline retrieval quality on a BEIR-layout collection with the product's own extraction,
 * chunking, analysis and ranking, in memory (no DynamoDB): for comparing ranking choices quickly.
 * The end-to-end figure to quote comes from ../shared/tools/retrieval-eval.mjs against the API.
 *
 *   npx tsx bench/search-quality.ts ../shared/data/cisi
 */
import { readFileSync } from 'node:fs';
import { analyze, termFrequencies } from '../shared/search/analyzer';
import { chunkBlocks } from '../shared/search/chunker';
import { extract } from '../shared/search/extract';
import { allTerms, analyzeChunk } from '../shared/search/indexing';
import { DEFAULT_RANK_PARAMS, expandQuery, scoreBm25f, topDocs, type Posting, type RankParams, type TermVector } from '../shared/search/ranker';
// @ts-expect-error the team's scoring tool is plain JavaScript
import * as metrics from '../../shared/tools/metrics.mjs';

/** The team's evaluation helpers (plain JavaScript, outside this repository). */
interface Metrics {
  loadQrels(dir: string): unknown;
  evaluate(qrels: unknown, run: Map<string, unknown>): { ndcg10: number; map100: number; recall100: number };
}

const dir = process.argv[2] ?? '../shared/data/cisi';
const rows = (f: string) => readFileSync(`${dir}/${f}`, 'utf8').split('\n').filter(Boolean).map((l): unknown => JSON.parse(l));
const docs = rows('corpus.jsonl') as Array<{ _id: string; title?: string; text?: string }>;
const queries = rows('queries.jsonl') as Array<{ _id: string; text: string }>;

const postings = new Map<string, Posting[]>();
const vectors = new Map<number, TermVector>();
const docOf: string[] = [];
const stats = { documents: 0, totalBodyLength: 0, totalTitleLength: 0 };
for (const d of docs) {
  const path = `${d._id}.txt`;
  const content = `${d.title ?? ''}\n\n${d.text ?? ''}`.trim();
  const { title, blocks } = extract(path, content);
  for (const chunk of chunkBlocks(title, blocks)) {
    const doc = docOf.length;
    docOf.push(d._id);
    const a = analyzeChunk(chunk);
    stats.documents++;
    stats.totalBodyLength += a.lenBody;
    stats.totalTitleLength += a.lenTitle;
    const terms = allTerms(a);
    vectors.set(doc, { doc, terms, length: a.lenBody + a.lenTitle });
    for (const term of terms.keys()) {
      const list = postings.get(term) ?? [];
      list.push({ doc, tfBody: a.bodyTf.get(term) ?? 0, tfTitle: a.titleTf.get(term) ?? 0, lenBody: a.lenBody, lenTitle: a.lenTitle });
      postings.set(term, list);
    }
  }
}

function run(params: RankParams) {
  const run = new Map<string, Array<{ doc: string; rank: number }>>();
  for (const q of queries) {
    const query = termFrequencies(analyze(q.text));
    let scores = scoreBm25f(query, postings, stats, params);
    if (params.feedbackDocs > 0) {
      const expanded = expandQuery(query, topDocs(scores, params.feedbackDocs), vectors, params);
      scores = scoreBm25f(expanded, postings, stats, params);
    }
    const seen = new Set<string>();
    const list: Array<{ doc: string; rank: number }> = [];
    for (const { doc } of topDocs(scores, 200)) {
      const id = docOf[doc]!;
      if (seen.has(id)) continue;
      seen.add(id);
      list.push({ doc: id, rank: list.length + 1 });
      if (list.length === 100) break;
    }
    run.set(q._id, list);
  }
  return (metrics as Metrics).evaluate((metrics as Metrics).loadQrels(dir), run);
}

const variants: Array<[string, Partial<RankParams>]> = [
  ['BM25 body+title as one field (Lucene-like)', { titleWeight: 1, bTitle: 0.75, feedbackDocs: 0 }],
  ['BM25F (title ×2)', { feedbackDocs: 0 }],
  ['BM25F + RM3 (defaults)', {}],
];
for (const [name, change] of variants) {
  const m = run({ ...DEFAULT_RANK_PARAMS, ...change });
  console.log(`${name.padEnd(44)} nDCG@10 ${m.ndcg10.toFixed(4)}  MAP@100 ${m.map100.toFixed(4)}  R@100 ${m.recall100.toFixed(4)}`);
}
console.log(`(${stats.documents} chunks from ${docs.length} documents; Lucene 8.7 BM25: 0.3845 / 0.1721 / 0.4473)`);
