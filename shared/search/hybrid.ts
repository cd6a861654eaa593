import { eachLimited } from '../each-limited';
import { isRetryable } from '../errors';
import type { EmbeddingModel } from '../models/embeddings';
import type { Runtime } from '../runtime';
import type { StoredVector } from '../store/search-index';

/**
 * Hybrid ranking over the lexical candidates: the best BM25F chunks are rescored by the cosine
 * similarity of their stored embedding to the query's, the two rankings fused by reciprocal rank
 * fusion (weight configurable), and the best fused ones reordered by a reranker when the source
 * has one. No vector index: each chunk item holds its vector, read with the candidate's text.
 */

export interface EmbeddingSettings {
  model: string;
  dimensions?: number;
}

export interface RerankSettings {
  model: string;
  candidates: number;
}

/** Lexical candidates a hybrid search rescores. */
export const HYBRID_CANDIDATES = 50;
/** Reciprocal rank fusion's constant (Cormack et al.): ranks deep in a list still count a little. */
const RRF_K = 60;

/** What a chunk's vector was made with: vectors of another model or size are not compared. */
export const vectorModelKey = (settings: EmbeddingSettings) => `${settings.model}${settings.dimensions ? `@${settings.dimensions}` : ''}`;

const norm = (vector: ArrayLike<number>) => {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  return Math.sqrt(sum) || 1;
};

/** A unit vector as int8 components and their scale: a quarter of float32's bytes, cosine kept to ~1%. */
export function quantize(vector: number[]): { v: Uint8Array; s: number } {
  const length = norm(vector);
  let max = 0;
  for (const x of vector) max = Math.max(max, Math.abs(x / length));
  const scale = max / 127 || 1;
  const out = new Int8Array(vector.length);
  for (let i = 0; i < vector.length; i++) out[i] = Math.round(vector[i]! / length / scale);
  return { v: new Uint8Array(out.buffer), s: scale };
}

/** Cosine similarity of a unit query vector and a stored (quantised unit) vector. */
export function cosine(query: Float32Array, stored: { v: Uint8Array; s: number }): number {
  const components = new Int8Array(stored.v.buffer, stored.v.byteOffset, stored.v.byteLength);
  if (components.length !== query.length) return 0;
  let dot = 0;
  let squares = 0;
  for (let i = 0; i < components.length; i++) {
    dot += query[i]! * components[i]!;
    squares += components[i]! * components[i]!;
  }
  return dot / (Math.sqrt(squares) || 1);
}

const unit = (vector: number[]) => {
  const length = norm(vector);
  return Float32Array.from(vector, (x) => x / length);
};

/** Embeds texts in the model's batches (a few at once), waiting and retrying when the provider throttles. */
export async function embedAll(model: EmbeddingModel, texts: string[], options: { concurrency?: number; retries?: number; baseDelayMs?: number } = {}): Promise<{ vectors: number[][]; tokens: number }> {
  const batches: string[][] = [];
  for (let i = 0; i < texts.length; i += model.batchSize) batches.push(texts.slice(i, i + model.batchSize));
  const results = new Array<number[][]>(batches.length);
  let tokens = 0;
  const retries = options.retries ?? 6;
  await eachLimited(batches, options.concurrency ?? (model.batchSize === 1 ? 8 : 2), async (batch, index) => {
    for (let attempt = 0; ; attempt++) {
      try {
        const out = await model.embed(batch, AbortSignal.timeout(60_000));
        results[index] = out.vectors;
        tokens += out.tokens;
        return;
      } catch (error) {
        if (!isRetryable(error) || attempt >= retries) throw error;
        const delay = (options.baseDelayMs ?? 500) * 2 ** attempt;
        await new Promise((r) => setTimeout(r, delay * (0.5 + Math.random() / 2)));
      }
    }
  });
  return { vectors: results.flat(), tokens };
}

/** The source's embedding model, through the runtime's resolver. */
export function embeddingModelOf(rt: Runtime, settings: EmbeddingSettings): Promise<EmbeddingModel> {
  if (!rt.models.embedding) throw new Error('No embedding models in this function');
  return rt.models.embedding(settings.model, settings.dimensions);
}

/** The text a chunk is embedded as: its heading path and its text. */
export const embeddingText = (chunk: { title: string; text: string }) => `${chunk.title}\n\n${chunk.text}`.slice(0, 8000);

export async function embedQuery(rt: Runtime, settings: EmbeddingSettings, query: string): Promise<Float32Array> {
  const key = `${vectorModelKey(settings)}\u0000${query}`;
  // A question asked again, or of several sources, is embedded once per instance.
  const cached = rt.caches.queryVectors.get(key);
  if (cached) return cached;
  const { vectors } = await embedAll(await embeddingModelOf(rt, settings), [query], { retries: 2 });
  const vector = unit(vectors[0]!);
  rt.caches.queryVectors.set(key, vector);
  return vector;
}

/**
 * Fuses the lexical candidates (best first) with their vector similarity, reranks the best, and
 * keeps `topK`. A candidate without a vector of the source's model keeps its lexical rank alone.
 */
/** What fusion needs of a lexical result: its chunk's stored vector comes with it. */
interface Candidate {
  chunkId: string;
  score: number;
  title: string;
  text: string;
  vector?: StoredVector;
}

export async function fuseCandidates<T extends Candidate>(
  rt: Runtime,
  source: { id: string; embedding: EmbeddingSettings; rerank?: RerankSettings },
  request: { query: string; topK: number; vectorWeight?: number },
  candidates: T[],
): Promise<Array<Omit<T, 'vector'> & { scores: { lexical: number; vector?: number; fused: number; rerank?: number } }>> {
  if (candidates.length === 0) return [];
  const query = await embedQuery(rt, source.embedding, request.query);
  const key = vectorModelKey(source.embedding);
  const similarity = new Map<string, number>();
  for (const candidate of candidates) {
    if (candidate.vector?.m === key) similarity.set(candidate.chunkId, cosine(query, candidate.vector));
  }
  const vectorRank = new Map([...similarity].sort((a, b) => b[1] - a[1]).map(([id], rank) => [id, rank + 1]));
  const weight = request.vectorWeight ?? 0.5;
  const fused = candidates
    .map(({ vector: _vector, ...candidate }, index) => {
      const rank = vectorRank.get(candidate.chunkId);
      const score = (1 - weight) / (RRF_K + index + 1) + (rank !== undefined ? weight / (RRF_K + rank) : 0);
      const vector = similarity.get(candidate.chunkId);
      return { ...candidate, score: round(score), scores: { lexical: candidate.score, ...(vector !== undefined ? { vector: round(vector) } : {}), fused: round(score) } };
    })
    .sort((a, b) => b.score - a.score);
  if (!source.rerank || !rt.models.reranker) return fused.slice(0, request.topK);
  const head = fused.slice(0, source.rerank.candidates);
  const reranker = await rt.models.reranker(source.rerank.model);
  const order = await reranker.rerank(request.query, head.map(embeddingText), AbortSignal.timeout(30_000));
  const reranked = order.filter((o) => head[o.index]).map((o) => ({ ...head[o.index]!, score: round(o.score), scores: { ...head[o.index]!.scores, rerank: round(o.score) } }));
  return [...reranked, ...fused.slice(source.rerank.candidates)].slice(0, request.topK);
}

const round = (x: number) => Math.round(x * 1_000_000) / 1_000_000;
