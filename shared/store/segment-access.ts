import { AppError } from '../errors';
import { decodeRuns, encodeRuns } from './postings-codec';

/**
 * Who may read a segment's chunks, kept in the segment's own item (read by every search already,
 * and versioned with it, so a compaction cannot copy an access list a later change replaced): the
 * distinct access lists of its documents (`classes`), and each chunk's class as runs in chunk
 * order. Class 0 is a document without a list, which the source's mode decides (open: everyone;
 * restricted: nobody); class i is `classes[i - 1]`. A segment whose documents have no list has
 * no access at all.
 */
export interface AccessList {
  users: string[];
  groups: string[];
}

export interface SegmentAccess {
  classes: AccessList[];
  runs: Uint8Array;
}

/** An item holds 400 KB; access lists past this are refused, naming the limit. */
export const MAX_SEGMENT_ACCESS_BYTES = 250_000;

/** The same list however it was written: ids sorted and distinct. */
export function canonicalAccess(access: AccessList): AccessList {
  return { users: [...new Set(access.users)].sort(), groups: [...new Set(access.groups)].sort() };
}
/** A list's identity, whatever order or repeats it was written with (none has its own). */
export const accessKey = (access: AccessList | undefined) => (access ? JSON.stringify(canonicalAccess(access)) : 'none');

/** Each chunk's class, from a segment's access (all 0 without one). */
export function chunkClasses(access: SegmentAccess | undefined, chunks: number): Uint32Array {
  return access ? decodeRuns(access.runs, chunks) : new Uint32Array(chunks);
}

/** Builds a segment's access from its chunks' lists, in chunk order; undefined when no chunk has one. */
export function accessBuilder() {
  const classes: AccessList[] = [];
  const index = new Map<string, number>();
  const perChunk: number[] = [];
  // The same list object (a compaction's or a change's chunks share their segment's) is keyed once, not once a chunk.
  const byObject = new Map<AccessList, number>();
  const classOf = (access: AccessList | undefined): number => {
    if (!access) return 0;
    const known = byObject.get(access);
    if (known !== undefined) return known;
    const key = accessKey(access);
    let cls = index.get(key);
    if (cls === undefined) {
      classes.push(canonicalAccess(access));
      cls = classes.length;
      index.set(key, cls);
    }
    byObject.set(access, cls);
    return cls;
  };
  return {
    /** The next `count` chunks have this list (or none). */
    add(count: number, access: AccessList | undefined) {
      const cls = classOf(access);
      for (let i = 0; i < count; i++) perChunk.push(cls);
    },
    build(): SegmentAccess | undefined {
      if (classes.length === 0) return undefined;
      const built = { classes, runs: encodeRuns(perChunk) };
      const size = built.runs.length + JSON.stringify(classes).length;
      if (size > MAX_SEGMENT_ACCESS_BYTES) {
        throw new AppError('UNPROCESSABLE', `The access lists of one batch of documents take ${size} bytes, over the ${MAX_SEGMENT_ACCESS_BYTES} a segment keeps: use groups rather than many lists of single users`, { limitBytes: MAX_SEGMENT_ACCESS_BYTES, actualBytes: size }, { retryable: false });
      }
      return built;
    },
  };
}

/** A segment's access with the chunks at `locals` given `access` (none: their document's list is removed). */
export function withChunkAccess(current: SegmentAccess | undefined, chunks: number, locals: number[], access: AccessList | undefined): SegmentAccess | undefined {
  const classes = chunkClasses(current, chunks);
  const builder = accessBuilder();
  const changed = new Set(locals);
  for (let local = 0; local < chunks; local++) builder.add(1, changed.has(local) ? access : classes[local] ? current!.classes[classes[local]! - 1] : undefined);
  return builder.build();
}
