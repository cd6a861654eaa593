import { ConflictError } from '../errors';
import { inSpan } from '../telemetry';
import { withDynamoCounters } from '../store/request-metrics';
import { countSearch } from './search-meter';
import { SEGMENT_SPAN, type ChunkRecord, type SegmentRecord } from '../store/search-index';
import type { TenantScope } from '../tenancy';
import { analyze, termFrequencies } from './analyzer';
import { storedFrequencies } from './indexing';
import { DEFAULT_RANK_PARAMS, rm3, type CorpusStats, type TermVector } from './ranker';
import { PrunedRanker, type IndexReader, type Pass } from './pruned-ranking';
import type { ScoredSegment } from './segment-scores';
import { POSTINGS_FORMAT } from '../store/postings-codec';
import type { Runtime } from '../runtime';
import { fuseCandidates, HYBRID_CANDIDATES, type EmbeddingSettings, type RerankSettings } from './hybrid';
import { hiddenChunks, type Reader, type SourceAccess } from './document-access';

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
  /** RM3 pseudo-relevance feedback (default on); off, plain BM25F, which may stop reading early. */
  feedback?: boolean;
  /** Read every posting instead of stopping early (the reference the pruned ranking must equal; tests and the bench). */
  exhaustive?: boolean;
  /** hybrid (default): vectors and the reranker where the source has them. */
  searchMode?: 'lexical' | 'hybrid';
  vectorWeight?: number;
  /** Whose search: only documents this end user may read are ranked (none: only those everyone may read). */
  reader?: Reader;
}

/** What a search needs of its source. */
export interface SearchableSource {
  id: string;
  type: string;
  /** Whether documents without an access list are readable by everyone (open, the default) or by nobody. */
  access?: SourceAccess;
  embedding?: EmbeddingSettings;
  rerank?: RerankSettings;
}

/** What a search read of the postings: waves of block reads, blocks read and left unread, chunks scored from their terms. */
export interface SearchReads {
  waves: number;
  blocksRead: number;
  blocksSkipped: number;
  exactlyScored: number;
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
  location?: ChunkRecord['location'];
  /** hybrid: the scores the ranking combined. */
  scores?: { lexical: number; vector?: number; fused: number; rerank?: number };
}

/** Longer queries keep their first distinct terms: bounds the requests a search makes. */
export const MAX_QUERY_TERMS = 64;

function termVector(doc: number, terms: ReadonlyMap<string, number>): TermVector {
  let length = 0;
  for (const tf of terms.values()) length += tf;
  return { doc, terms, length: length || 1 };
}

function statsOf(segments: SegmentRecord[]): CorpusStats {
  const stats = { documents: 0, totalBodyLength: 0, totalTitleLength: 0, indexed: 0 };
  for (const s of segments) {
    if (s.state !== 'live') continue;
    stats.indexed += s.chunks;
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
 * Searches one source's index: the segment items, then each query term's directory (postings
 * inline, or the envelopes of its impact-ordered blocks); the blocks that can still change the top
 * chunks, in a few waves (pruned-ranking.ts); the top chunks (for feedback and the answer); the
 * same for the feedback terms. Each step is one round trip of parallel requests, and directories
 * and chunks of live segments this process read recently come from its cache instead.
 */
export function searchSource(
  rt: Runtime,
  scope: TenantScope,
  source: SearchableSource,
  request: SearchRequest,
): Promise<{ results: SearchResult[]; took: number; scoringMs: number; reads: SearchReads; mode: 'lexical' | 'hybrid' }> {
  const hybrid = request.searchMode !== 'lexical' && source.embedding !== undefined;
  return inSpan(`search ${source.id}`, { attributes: { 'cairn.knowledge_source.id': source.id, 'cairn.search.top_k': request.topK ?? 10, 'cairn.search.mode': hybrid ? 'hybrid' : 'lexical' } }, async (span) => {
    const { result, counters } = withDynamoCounters(async () => {
      if (!hybrid) return rankSource(rt, scope, source, request);
      // The lexical candidates, then their vectors, fused (and reranked): one search, one count of its reads.
      const started = performance.now();
      const lexical = await rankSource(rt, scope, source, { ...request, topK: Math.max(request.topK, HYBRID_CANDIDATES) }, { withVectors: true });
      const results = await fuseCandidates(rt, { id: source.id, embedding: source.embedding!, rerank: source.rerank }, request, lexical.results);
      return { ...lexical, results, took: Math.round(performance.now() - started) };
    });
    const { terms, segments, ...found } = await result;
    const { reads } = found;
    countSearch(counters.readUnits);
    span.setAttributes({
      'cairn.search.terms': terms,
      'cairn.search.segments': segments,
      'cairn.search.waves': reads.waves,
      'cairn.search.blocks_read': reads.blocksRead,
      'cairn.search.blocks_skipped': reads.blocksSkipped,
      'cairn.search.results': found.results.length,
      'cairn.search.scoring_ms': Math.round(found.scoringMs * 10) / 10,
      'cairn.dynamodb.requests': counters.dynamoRequests,
      'cairn.dynamodb.read_units': counters.readUnits,
    });
    return { ...found, mode: hybrid ? ('hybrid' as const) : ('lexical' as const) };
  });
}

async function rankSource(
  rt: Runtime,
  scope: TenantScope,
  source: { id: string; type: string; access?: SourceAccess },
  request: SearchRequest,
  options: { withVectors?: boolean } = {},
): Promise<{ results: Array<SearchResult & { vector?: ChunkRecord['vector'] }>; took: number; scoringMs: number; terms: number; segments: number; reads: SearchReads }> {
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
  if (query.size === 0) return { results: [], took: Math.round(performance.now() - started), scoringMs: 0, terms: 0, segments: 0, reads: { waves: 0, blocksRead: 0, blocksSkipped: 0, exactlyScored: 0 } };

  const segmentList = await rt.store.searchIndex.recentSegments(scope, source.id);
  // The reader's hidden chunks count as deleted for this search; a segment they may read nothing of is not read at all.
  const live = new Map<number, ScoredSegment>();
  for (const s of segmentList) {
    if (s.state !== 'live') continue;
    const hidden = hiddenChunks(s, source.access ?? 'open', request.reader);
    if (!hidden.all) live.set(s.segNo, { segNo: s.segNo, span: SEGMENT_SPAN, deleted: hidden.deleted, size: s.chunks, format: s.format });
  }
  const withNorms = segmentList.filter((s) => live.has(s.segNo) && s.format === POSTINGS_FORMAT).map((s) => ({ segNo: s.segNo, size: s.chunks }));
  const liveSegments = [...live.keys()];
  const index = rt.store.searchIndex;
  const reader: IndexReader = {
    directories: (terms) => index.readTermItems(scope, source.id, terms, liveSegments),
    blocks: (term, after, limit) => index.readTermBlocks(scope, source.id, term, after, limit),
    chunks: (docNos) => index.getChunks(scope, source.id, docNos),
    blockKey: index.blockKey,
    postings: index.decodedPostings,
    terms: (chunk) => index.parsedChunk(chunk, storedFrequencies),
  };
  const params = DEFAULT_RANK_PARAMS;
  const ranker = new PrunedRanker(reader, live, statsOf(segmentList), params, request.exhaustive);
  const original = [...query].map(([term, weight]) => ({ term, weight }));
  const wanted = request.filter ? Math.min(request.topK * 5, 500) : request.topK;
  let final: Pass = { original, feedback: [], k: wanted };

  // The norms (format-2 segments' field lengths) come in the same round trip as the query's terms.
  const [norms] = await Promise.all([index.readNorms(scope, source.id, withNorms), ranker.load(original.map((e) => e.term))]);
  for (const { segNo } of withNorms) {
    const segmentNorms = norms.get(segNo);
    if (!segmentNorms) throw new Error(`search index: segment ${segNo} of ${source.id} has no norms`);
    live.get(segNo)!.norms = segmentNorms;
  }

  if (params.feedbackDocs > 0 && request.feedback !== false) {
    // The second pass reads every block of these terms (with twenty feedback terms it cannot stop early), so this one reads them at once.
    const first = await ranker.rank({ original, feedback: [], k: Math.max(params.feedbackDocs, request.topK) }, { readAll: true });
    if (first.length > 0) {
      await ranker.fetch(first.map((d) => d.doc));
      const expansion = timed(() => {
        const vectors = new Map(first.filter((d) => ranker.chunks.has(d.doc)).map((d) => [d.doc, termVector(d.doc, reader.terms(ranker.chunks.get(d.doc)!).all)]));
        return rm3(query, first, vectors, params);
      });
      // Expanded query = scale × original + feedback terms, scored as the exhaustive scorer does it.
      final = { original, scale: expansion.scale, feedback: [...expansion.feedback].map(([term, weight]) => ({ term, weight })), k: wanted };
    }
  }

  const candidates = await ranker.rank(final);
  scoringMs += ranker.counts.cpuMs;
  await ranker.fetch(candidates.map((d) => d.doc));
  const chunks = ranker.chunks;
  const results: Array<SearchResult & { vector?: ChunkRecord['vector'] }> = [];
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
      ...(chunk.location ? { location: chunk.location } : {}),
      ...(options.withVectors && chunk.vector ? { vector: chunk.vector } : {}),
    });
    if (results.length === request.topK) break;
  }
  const { waves, blocksRead, exactlyScored } = ranker.counts;
  return {
    results,
    took: Math.round(performance.now() - started),
    scoringMs: Math.round(scoringMs * 100) / 100,
    terms: query.size,
    segments: liveSegments.length,
    reads: { waves, blocksRead, blocksSkipped: ranker.skipped(), exactlyScored },
  };
}

export function assertSearchable(source: { id: string; status: string }): void {
  if (source.status !== 'ready') {
    throw new ConflictError(`Knowledge source ${source.id} is ${source.status}, not ready to search`, { status: source.status });
  }
}
