import { ConflictError } from '../errors';
import { inSpan } from '../telemetry';
import { withDynamoCounters } from '../store/request-metrics';
import { countSearch } from './search-meter';
import { SEGMENT_SPAN, type ChunkRecord, type SegmentRecord } from '../store/search-index';
import type { TenantScope } from '../tenancy';
import { analyze, termFrequencies } from './analyzer';
import { DEFAULT_RANK_PARAMS, rm3, type CorpusStats, type TermVector } from './ranker';
import { SegmentScores } from './segment-scores';
import type { Runtime } from '../runtime';

export interface SearchFilter {
  /** Only documents whose path (or row key) starts with this. */
  pathPrefix?: string;
  /** Only chunks whose metadata has all of these values. */
  metadata?: Record<string, string | number | boolean>;
}

export interface SearchRequest {
  query: string;
  topK: number;
  filter?: SearchFilter;
}

export interface SearchResult {
  chunkId: string;
  documentId: string;
  path?: string;
  rowKey?: string;
  score: number;
  title: string;
  text: string;
  metadata: Record<string, unknown>;
}

/** Longer queries keep their first distinct terms: bounds the requests a search makes. */
export const MAX_QUERY_TERMS = 64;

function parseTermVector(doc: number, chunk: ChunkRecord): TermVector {
  const terms = new Map<string, number>();
  let length = 0;
  for (const pair of chunk.terms.split(' ')) {
    const at = pair.lastIndexOf(':');
    if (at <= 0) continue;
    const tf = Number(pair.slice(at + 1));
    terms.set(pair.slice(0, at), tf);
    length += tf;
  }
  return { doc, terms, length: length || 1 };
}

function statsOf(segments: SegmentRecord[]): CorpusStats {
  const stats = { documents: 0, totalBodyLength: 0, totalTitleLength: 0 };
  for (const s of segments) {
    if (s.state !== 'live') continue;
    stats.documents += s.chunks - s.deletedCount;
    stats.totalBodyLength += s.lenBody - s.deletedLenBody;
    stats.totalTitleLength += s.lenTitle - s.deletedLenTitle;
  }
  return stats;
}

function matches(chunk: ChunkRecord, filter: SearchFilter | undefined): boolean {
  if (!filter) return true;
  if (filter.pathPrefix !== undefined && !chunk.documentKey.startsWith(filter.pathPrefix)) return false;
  for (const [key, value] of Object.entries(filter.metadata ?? {})) if (chunk.metadata?.[key] !== value) return false;
  return true;
}

/**
 * Searches one source's index. DynamoDB work, whatever the corpus size: the segment items, then
 * each query term's postings; the top chunks (for feedback and the answer); the postings of
 * feedback terms; any chunk not yet fetched. Each step is one round trip of parallel requests, and
 * postings and chunks of live segments this process read recently come from its cache instead. Scoring decodes postings straight
 * into per-segment score arrays (see SegmentScores).
 */
export function searchSource(
  rt: Runtime,
  scope: TenantScope,
  source: { id: string; type: 'postgresql' | 'file-collection' },
  request: SearchRequest,
): Promise<{ results: SearchResult[]; took: number; scoringMs: number }> {
  return inSpan(`search ${source.id}`, { attributes: { 'cairn.knowledge_source.id': source.id, 'cairn.search.top_k': request.topK ?? 10 } }, async (span) => {
    const { result, counters } = withDynamoCounters(() => rankSource(rt, scope, source, request));
    const { terms, segments, ...found } = await result;
    countSearch(counters.readUnits);
    span.setAttributes({
      'cairn.search.terms': terms,
      'cairn.search.segments': segments,
      'cairn.search.results': found.results.length,
      'cairn.search.scoring_ms': Math.round(found.scoringMs * 10) / 10,
      'cairn.dynamodb.requests': counters.dynamoRequests,
      'cairn.dynamodb.read_units': counters.readUnits,
    });
    return found;
  });
}

async function rankSource(
  rt: Runtime,
  scope: TenantScope,
  source: { id: string; type: 'postgresql' | 'file-collection' },
  request: SearchRequest,
): Promise<{ results: SearchResult[]; took: number; scoringMs: number; terms: number; segments: number }> {
  const started = performance.now();
  let scoringMs = 0;
  const timed = <T>(fn: () => T): T => {
    const t0 = performance.now();
    try {
      return fn();
    } finally {
      scoringMs += performance.now() - t0;
    }
  };
  const frequencies = termFrequencies(analyze(request.query));
  const query = new Map([...frequencies].slice(0, MAX_QUERY_TERMS));
  if (query.size === 0) return { results: [], took: Math.round(performance.now() - started), scoringMs: 0, terms: 0, segments: 0 };

  const segmentList = await rt.store.searchIndex.readSegments(scope, source.id);
  const live = new Map(
    segmentList.filter((s) => s.state === 'live').map((s) => [s.segNo, { segNo: s.segNo, span: SEGMENT_SPAN, deleted: s.deleted, size: s.chunks }]),
  );
  const liveSegments = [...live.keys()];
  const items = await rt.store.searchIndex.readTermItems(scope, source.id, [...query.keys()], liveSegments);
  const params = DEFAULT_RANK_PARAMS;
  const scorer = new SegmentScores(live, statsOf(segmentList), params);
  timed(() => {
    for (const [term, weight] of query) scorer.addTerm(items.get(term) ?? [], weight);
  });

  const chunks = new Map<number, ChunkRecord>();
  const fetchChunks = async (docNos: number[]) => {
    const missing = docNos.filter((n) => !chunks.has(n));
    if (missing.length > 0) for (const [n, c] of await rt.store.searchIndex.getChunks(scope, source.id, missing)) chunks.set(n, c);
  };

  if (params.feedbackDocs > 0) {
    const first = timed(() => scorer.top(Math.max(params.feedbackDocs, request.topK)));
    if (first.length > 0) {
      await fetchChunks(first.map((d) => d.doc));
      const expansion = timed(() => {
        const vectors = new Map(first.filter((d) => chunks.has(d.doc)).map((d) => [d.doc, parseTermVector(d.doc, chunks.get(d.doc)!)]));
        return rm3(query, first, vectors, params);
      });
      const newTerms = [...expansion.feedback.keys()].filter((t) => !items.has(t));
      if (newTerms.length > 0) for (const [term, list] of await rt.store.searchIndex.readTermItems(scope, source.id, newTerms, liveSegments)) items.set(term, list);
      // Expanded query = scale × original + feedback terms: scale the first pass, add the feedback terms.
      timed(() => {
        scorer.scale(expansion.scale);
        for (const [term, weight] of expansion.feedback) scorer.addTerm(items.get(term) ?? [], weight);
      });
    }
  }

  const wanted = request.filter ? Math.min(request.topK * 5, 500) : request.topK;
  const candidates = timed(() => scorer.top(wanted));
  await fetchChunks(candidates.map((d) => d.doc));
  const results: SearchResult[] = [];
  for (const { doc, score } of candidates) {
    const chunk = chunks.get(doc);
    if (!chunk || !matches(chunk, request.filter)) continue;
    results.push({
      chunkId: chunk.chunkId,
      documentId: chunk.documentId,
      ...(source.type === 'postgresql' ? { rowKey: chunk.documentKey } : { path: chunk.documentKey }),
      score: Math.round(score * 10_000) / 10_000,
      title: chunk.title,
      text: chunk.text,
      metadata: chunk.metadata ?? {},
    });
    if (results.length === request.topK) break;
  }
  return { results, took: Math.round(performance.now() - started), scoringMs: Math.round(scoringMs * 100) / 100, terms: query.size, segments: liveSegments.length };
}

export function assertSearchable(source: { id: string; status: string }): void {
  if (source.status !== 'ready') {
    throw new ConflictError(`Knowledge source ${source.id} is ${source.status}, not ready to search`, { status: source.status });
  }
}
