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

/** A chunk's stored `term:tf` pairs (what `allTerms` gave, written space-separated) as a map. */
export function parseTerms(terms: string): Map<string, number> {
  const all = new Map<string, number>();
  for (const pair of terms.split(' ')) {
    const at = pair.lastIndexOf(':');
    if (at > 0) all.set(pair.slice(0, at), Number(pair.slice(at + 1)));
  }
  return all;
}

/**
 * A stored chunk's per-field frequencies as indexing computed them: its title analysed again, the
 * rest of each term's frequency is body (compaction re-indexes chunks, exact scoring scores one).
 */
export function fieldFrequencies(chunk: { title: string; terms: string }): { titleTf: Map<string, number>; bodyTf: Map<string, number> } {
  const titleTf = termFrequencies(analyze(chunk.title));
  const bodyTf = new Map<string, number>();
  for (const [term, tf] of parseTerms(chunk.terms)) {
    const body = tf - (titleTf.get(term) ?? 0);
    if (body > 0) bodyTf.set(term, body);
  }
  return { titleTf, bodyTf };
}
