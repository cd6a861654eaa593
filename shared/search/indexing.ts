import { analyze, termFrequencies } from './analyzer';
import type { Chunk } from './chunker';

/** A chunk analysed for the index: per-field term frequencies and lengths. */
export interface AnalyzedChunk {
  titleTf: Map<string, number>;
  bodyTf: Map<string, number>;
  lenTitle: number;
  lenBody: number;
}

export function analyzeChunk(chunk: Pick<Chunk, 'title' | 'text'>): AnalyzedChunk {
  const title = analyze(chunk.title);
  const body = analyze(chunk.text);
  return { titleTf: termFrequencies(title), bodyTf: termFrequencies(body), lenTitle: title.length, lenBody: body.length };
}

/** Every term of the chunk with its frequency in both fields together (feedback, deletion). */
export function allTerms(chunk: AnalyzedChunk): Map<string, number> {
  const all = new Map(chunk.bodyTf);
  for (const [t, n] of chunk.titleTf) all.set(t, (all.get(t) ?? 0) + n);
  return all;
}
