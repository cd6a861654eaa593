import { analyze, termFrequencies } from './analyzer';
import type { Chunk } from './chunker';

/** A chunk analysed for the index: per-field term frequencies and lengths. */
export interface AnalyzedChunk {
  titleTf: ReadonlyMap<string, number>;
  bodyTf: ReadonlyMap<string, number>;
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
function parseTerms(terms: string): Map<string, number> {
  const all = new Map<string, number>();
  for (const pair of terms.split(' ')) {
    const at = pair.lastIndexOf(':');
    if (at > 0) all.set(pair.slice(0, at), Number(pair.slice(at + 1)));
  }
  return all;
}

/** A stored chunk's terms: all of them with their frequency in both fields together, and per field. */
export interface StoredFrequencies {
  all: ReadonlyMap<string, number>;
  titleTf: ReadonlyMap<string, number>;
  bodyTf: ReadonlyMap<string, number>;
}

/**
 * A stored chunk's frequencies as indexing computed them: its title analysed again, the rest of
 * each term's frequency is body (compaction re-indexes chunks, ranking scores them and reads
 * their terms for RM3's feedback; the search index cache keeps its parse of a kept chunk).
 */
export function storedFrequencies(chunk: { title: string; terms: string }): StoredFrequencies {
  const all = parseTerms(chunk.terms);
  const titleTf = termFrequencies(analyze(chunk.title));
  const bodyTf = new Map<string, number>();
  for (const [term, tf] of all) {
    const body = tf - (titleTf.get(term) ?? 0);
    if (body > 0) bodyTf.set(term, body);
  }
  return { all, titleTf, bodyTf };
}
