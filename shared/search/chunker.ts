import type { Block, Location } from './extract';

/** Where a chunk sits in a paged document: its first page (and last, when it runs onto the next), slide or sheet. */
export interface ChunkLocation extends Location {
  pageEnd?: number;
}

/** A piece of a document as it is indexed and returned by search. */
export interface Chunk {
  index: number;
  /** Document title and headings above the text, for title weighting and display. */
  title: string;
  text: string;
  location?: ChunkLocation;
}

export interface ChunkOptions {
  /** Target size in characters. */
  size: number;
  /** Characters of the previous chunk's end repeated at the start of the next. */
  overlap: number;
}

export const DEFAULT_CHUNK_OPTIONS: ChunkOptions = { size: 1500, overlap: 200 };

const SENTENCE = /[^.!?。！？]+(?:[.!?。！？]+["')\]]*|$)\s*/g;

/** Sentences, and words for sentences longer than `max`. */
function pieces(text: string, max: number): string[] {
  const out: string[] = [];
  for (const sentence of text.match(SENTENCE) ?? [text]) {
    if (sentence.length <= max) {
      out.push(sentence);
      continue;
    }
    let current = '';
    for (const word of sentence.split(/(?<=\s)/)) {
      if (current.length + word.length > max && current) {
        out.push(current);
        current = '';
      }
      current += word.length > max ? word.slice(0, max) : word;
    }
    if (current) out.push(current);
  }
  return out;
}

/** The end of a chunk, cut at a sentence (else word) start, to open the next one. */
function tail(text: string, overlap: number): string {
  if (overlap <= 0 || text.length <= overlap) return overlap > 0 ? text : '';
  const cut = text.slice(text.length - overlap);
  const sentence = cut.search(/[.!?]\s+\S/);
  if (sentence >= 0) return cut.slice(sentence + 1).trimStart();
  const space = cut.indexOf(' ');
  return space >= 0 ? cut.slice(space + 1) : cut;
}

/** Where a block sits, as a chunk boundary: its page, slide or sheet (undefined for documents without them). */
const placeOf = (location: Location | undefined) => (location ? `${location.page ?? ''}|${location.slide ?? ''}|${location.sheet ?? ''}` : undefined);

/**
 * Structure-aware chunking: a chunk never spans two sections (heading paths), nor two pages,
 * slides or sheets — so a passage cites the page its sentences are on, even where short pages
 * would fit in one chunk. Within a section paragraphs are packed up to `size`, a long paragraph is
 * split at sentences, a long sentence at words. Consecutive chunks of a section's page share
 * `overlap` characters.
 */
export function chunkBlocks(title: string | undefined, blocks: Block[], options: ChunkOptions = DEFAULT_CHUNK_OPTIONS): Chunk[] {
  const chunks: Chunk[] = [];
  let section: string | undefined;
  let current = '';
  let carried = '';
  // The locations of the first and the last block whose text the chunk holds.
  let first: Location | undefined;
  let last: Location | undefined;
  const titleOf = (headings: string[]) => [title, ...headings].filter((h, i, all) => h && all.indexOf(h) === i).join(' › ');
  const emit = () => {
    if (current.trim() && current.trim() !== carried.trim()) {
      const location = locationOf(first, last);
      chunks.push({ index: chunks.length, title: section ?? '', text: current.trim(), ...(location ? { location } : {}) });
      carried = tail(current.trim(), options.overlap);
      first = last;
    }
    current = carried ? `${carried} ` : '';
  };
  let place: string | undefined;
  for (const block of blocks) {
    const blockTitle = titleOf(block.headings);
    const blockPlace = placeOf(block.location);
    if (section !== undefined && (blockTitle !== section || blockPlace !== place)) {
      emit();
      current = '';
      carried = '';
      first = undefined;
    }
    section = blockTitle;
    place = blockPlace;
    for (const piece of pieces(block.text, options.size)) {
      if (current.length + piece.length > options.size && current.trim() && current.trim() !== carried.trim()) emit();
      if (!current.trim() || current.trim() === carried.trim()) first = block.location;
      current += piece;
      last = block.location;
    }
    current += '\n\n';
  }
  emit();
  if (chunks.length === 0 && title) chunks.push({ index: 0, title, text: title });
  return chunks;
}

function locationOf(first: Location | undefined, last: Location | undefined): ChunkLocation | undefined {
  if (!first) return undefined;
  return last?.page !== undefined && first.page !== undefined && last.page > first.page ? { ...first, pageEnd: last.page } : { ...first };
}
