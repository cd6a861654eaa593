import type { SegmentRecord } from '../store/search-index';
import { forEachRun } from '../store/postings-codec';
import type { AccessList } from '../store/segment-access';

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
  // Walked run by run (a document's chunks are one run): no per-chunk array on a search's path.
  const bits = new Uint8Array(Math.ceil(segment.chunks / 8));
  if (segment.deleted) bits.set(segment.deleted.subarray(0, bits.length));
  let visible = 0;
  let covered = 0;
  const mark = (start: number, end: number, cls: number) => {
    if (readable[cls]) return void (visible += end - start);
    for (let local = start; local < end; local++) bits[local >> 3]! |= 1 << (local % 8);
  };
  forEachRun(segment.access.runs, (start, run, cls) => {
    const end = Math.min(segment.chunks, start + run);
    if (start < end) mark(start, end, cls);
    covered = Math.max(covered, end);
  });
  // Positions past the runs have no list (class 0).
  if (covered < segment.chunks) mark(covered, segment.chunks, 0);
  return { deleted: bits, all: visible === 0 };
}
