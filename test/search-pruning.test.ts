import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { analyze, termFrequencies } from '../shared/search/analyzer';
import { layoutTerm } from '../shared/search/impact-blocks';
import { analyzeChunk, allTerms, storedFrequencies } from '../shared/search/indexing';
import { indexTuning } from '../shared/search/index-tuning';
import { PrunedRanker, type IndexReader, type Pass } from '../shared/search/pruned-ranking';
import { DEFAULT_RANK_PARAMS } from '../shared/search/ranker';
import { searchSource, type SearchRequest } from '../shared/search/search';
import type { ScoredSegment } from '../shared/search/segment-scores';
import { blockSortKey } from '../shared/store/keys';
import { decodePostingsV2, type Posting, POSTINGS_FORMAT } from '../shared/store/postings-codec';
import type { ChunkRecord, TermBlock, TermItems } from '../shared/store/search-index';
import { call } from './helpers/http';
import { newTenant, type TestTenant } from './helpers/tenant';
import { testLocal, testRt } from './helpers/runtime';

/**
 * The pruned ranking (impact-ordered blocks, stopping early) against the exhaustive scorer on the
 * CISI collection (1,460 abstracts, 76 long natural-language queries). Blocks of 16 postings, so
 * nearly every query term has many blocks and the ranking has to decide, wave by wave, what it may
 * leave unread.
 */
const cisi = JSON.parse(gunzipSync(readFileSync(new URL('./fixtures/cisi.json.gz', import.meta.url))).toString()) as {
  corpus: Array<{ title: string; text: string }>;
  queries: string[];
};
/** Keyword queries: the first three terms of each question. */
const shortQueries = cisi.queries.map((q) => [...termFrequencies(analyze(q)).keys()].slice(0, 3).join(' '));
const saved = { ...indexTuning };

describe('pruned ranking over impact-ordered blocks, in memory', () => {
  /** CISI as one segment, laid out as ingestion lays it out, behind a reader that counts what is read. */
  const SPAN = 2 ** 20;
  const postings = new Map<string, Posting[]>();
  const chunks = new Map<number, ChunkRecord>();
  const lengths = { lenBody: new Int32Array(cisi.corpus.length), lenTitle: new Int32Array(cisi.corpus.length) };
  const stats = { documents: cisi.corpus.length, totalBodyLength: 0, totalTitleLength: 0 };
  cisi.corpus.forEach((doc, i) => {
    const a = analyzeChunk({ title: doc.title, text: doc.text });
    for (const term of new Set([...a.bodyTf.keys(), ...a.titleTf.keys()])) {
      postings.set(term, [...(postings.get(term) ?? []), { doc: i, tfBody: a.bodyTf.get(term) ?? 0, tfTitle: a.titleTf.get(term) ?? 0, lenBody: a.lenBody, lenTitle: a.lenTitle }]);
    }
    const terms = [...allTerms(a)].map(([t, n]) => `${t}:${n}`).join(' ');
    chunks.set(i, { docNo: i, chunkId: `c${i}`, documentId: `d${i}`, documentKey: `${i}`, title: doc.title, text: doc.text, terms, lenBody: a.lenBody, lenTitle: a.lenTitle });
    lengths.lenBody[i] = a.lenBody;
    lengths.lenTitle[i] = a.lenTitle;
    stats.totalBodyLength += a.lenBody;
    stats.totalTitleLength += a.lenTitle;
  });
  const directories = new Map<string, TermItems>();
  const blocks = new Map<string, TermBlock[]>();
  for (const [term, list] of postings) {
    const layout = layoutTerm(list, stats, DEFAULT_RANK_PARAMS, 16);
    if (layout.inline) {
      directories.set(term, [{ segNo: 0, bytes: layout.inline }]);
      continue;
    }
    directories.set(term, [{ segNo: 0, bytes: layout.directory!, count: layout.count }]);
    blocks.set(term, layout.blocks!.map((b, index) => ({ sk: blockSortKey({ impact: b.impact, segNo: 0, index }), segNo: 0, bytes: b.bytes })).sort((a, b) => (a.sk < b.sk ? -1 : 1)));
  }
  const reader: IndexReader = {
    directories: async (terms) => new Map(terms.map((t) => [t, directories.get(t) ?? []])),
    blocks: async (term, after, limit) => {
      const all = blocks.get(term) ?? [];
      const from = after === undefined ? 0 : all.findIndex((b) => b.sk > after);
      const got = from < 0 ? [] : all.slice(from, limit === undefined ? undefined : from + limit);
      return { blocks: got, last: got.length > 0 ? got[got.length - 1]!.sk : after };
    },
    chunks: async (docNos) => new Map(docNos.map((n) => [n, chunks.get(n)!])),
    blockKey: blockSortKey,
    postings: decodePostingsV2,
    terms: storedFrequencies,
  };
  const live = () => new Map<number, ScoredSegment>([[0, { segNo: 0, span: SPAN, size: cisi.corpus.length, format: POSTINGS_FORMAT, norms: lengths }]]);

  it('stops early on keyword queries and ranks exactly as reading every block', async () => {
    indexTuning.pruneFromBlocks = 2;
    let skipped = 0;
    let listed = 0;
    for (const query of shortQueries) {
      const pass: Pass = { original: [...termFrequencies(analyze(query))].map(([term, weight]) => ({ term, weight })), feedback: [], k: 10 };
      const exact = await new PrunedRanker(reader, live(), stats, DEFAULT_RANK_PARAMS, true).rank(pass);
      const ranker = new PrunedRanker(reader, live(), stats, DEFAULT_RANK_PARAMS);
      expect(await ranker.rank(pass), query).toEqual(exact);
      skipped += ranker.skipped();
      listed += ranker.skipped() + ranker.counts.blocksRead;
    }
    // A good part of the blocks is never read: their bounds show they cannot change the top ten.
    expect(skipped / listed).toBeGreaterThan(0.2);
    Object.assign(indexTuning, saved);
  });
});

describe('pruned ranking through DynamoDB', () => {
  const app = createLocalApp(testRt);
  let t: TestTenant;
  let id: string;
  beforeAll(async () => {
    Object.assign(indexTuning, { blockPostings: 16, pruneFromBlocks: 2 });
    t = await newTenant('unlimited');
    const files = cisi.corpus.map((d, i) => ({ path: `cisi/${String(i).padStart(4, '0')}.md`, content: `# ${d.title}\n\n${d.text}` }));
    const created = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'CISI', type: 'file-collection', files } });
    expect(created.status).toBe(201);
    id = created.body.data.id;
    expect((await call(app, 'POST', `/v1/knowledge-sources/${id}/connect`, { key: t.apiKey, body: {} })).status).toBe(202);
    await testLocal.ingestion!.drain();
  }, 120_000);
  afterAll(() => Object.assign(indexTuning, saved));

  it('returns exactly the exhaustive top 10 for every CISI question (with feedback) and its keyword form (without)', async () => {
    let waves = 0;
    const requests: SearchRequest[] = [...cisi.queries.map((query) => ({ query, topK: 10 })), ...shortQueries.map((query) => ({ query, topK: 10, feedback: false }))];
    for (const request of requests) {
      const exact = await searchSource(testRt, t.scope, { id, type: 'file-collection' }, { ...request, exhaustive: true });
      const pruned = await searchSource(testRt, t.scope, { id, type: 'file-collection' }, request);
      // Same chunks, same order, same scores.
      expect(pruned.results.map((r) => [r.chunkId, r.score]), request.query).toEqual(exact.results.map((r) => [r.chunkId, r.score]));
      waves += pruned.reads.waves;
    }
    // The keyword queries were read in waves (the path that stops early was taken).
    expect(waves).toBeGreaterThan(0);
  }, 180_000);
});
