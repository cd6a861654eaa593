import type { SegmentRecord } from '../store/search-index';
import { chunkClasses, type AccessList } from '../store/segment-access';

/**
 * Which chunks a search may rank: those of documents the reader may read. A document with an
 * access list is readable by the users and groups it names; one without by everyone in an `open`
 * source and by nobody in a `restricted` one. Without a reader (nobody named) only documents
 * readable by everyone are. Hidden chunks are marked like deleted ones, so the ranking never
 * scores them: the top k is filled with readable chunks, and nothing of a hidden one is read out.
 */
export type SourceAccess = 'open' | 'restricted';

/** Who reads: an end user's id and groups, or nobody. */
export interface Reader {
  id: string;
  groups: readonly string[];
}

export function mayRead(list: AccessList, reader: Reader | undefined): boolean {
  if (!reader) return false;
  return list.users.includes(reader.id) || list.groups.some((g) => reader.groups.includes(g));
}

/**
 * A segment's chunks the reader may not read, as a bitmap in the layout of `deleted` and merged
 * with it; `all` when none of them is readable (the segment is left out of the search).
 */
export function hiddenChunks(segment: Pick<SegmentRecord, 'chunks' | 'deleted' | 'access'>, mode: SourceAccess, reader: Reader | undefined): { deleted: Uint8Array | undefined; all: boolean } {
  const unlisted = mode === 'open';
  if (!segment.access) return unlisted ? { deleted: segment.deleted, all: false } : { deleted: segment.deleted, all: true };
  // Class 0 (no list) follows the mode; each list is judged once.
  const readable = [unlisted, ...segment.access.classes.map((list) => mayRead(list, reader))];
  if (readable.every(Boolean)) return { deleted: segment.deleted, all: false };
  const classes = chunkClasses(segment.access, segment.chunks);
  const bits = new Uint8Array(Math.ceil(segment.chunks / 8));
  if (segment.deleted) bits.set(segment.deleted.subarray(0, bits.length));
  let visible = 0;
  for (let local = 0; local < segment.chunks; local++) {
    if (readable[classes[local]!]) visible++;
    else bits[local >> 3]! |= 1 << (local % 8);
  }
  return { deleted: bits, all: visible === 0 };
}
