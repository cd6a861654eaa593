/** One chunk's entry in a term's postings: its term frequencies and field lengths. */
export interface Posting {
  doc: number;
  tfBody: number;
  tfTitle: number;
  lenBody: number;
  lenTitle: number;
}

/**
 * Postings of one term in one segment, packed as unsigned varints: for each chunk (ascending)
 * the gap to the previous chunk number, then tfBody, tfTitle, lenBody, lenTitle. Typically 6–8
 * bytes a posting, so a term in 50,000 chunks still fits one DynamoDB item and one read.
 */
function writeVarint(out: number[], value: number) {
  let v = value;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
}

export function encodePostings(postings: Posting[]): Uint8Array {
  const sorted = [...postings].sort((a, b) => a.doc - b.doc);
  const out: number[] = [];
  let previous = 0;
  for (const p of sorted) {
    writeVarint(out, p.doc - previous);
    writeVarint(out, p.tfBody);
    writeVarint(out, p.tfTitle);
    writeVarint(out, p.lenBody);
    writeVarint(out, p.lenTitle);
    previous = p.doc;
  }
  return Uint8Array.from(out);
}

/** Reads unsigned varints one after another. */
function varints(bytes: Uint8Array, start = 0) {
  let i = start;
  return {
    next(): number {
      let value = 0;
      let scale = 1;
      for (;;) {
        const byte = bytes[i++]!;
        value += (byte & 0x7f) * scale;
        if (byte < 0x80) return value;
        scale *= 128;
      }
    },
    get offset() {
      return i;
    },
    get done() {
      return i >= bytes.length;
    },
  };
}

/** Calls `visit` for each posting, in chunk order, without allocating (the scoring hot path). */
export function forEachPosting(
  bytes: Uint8Array,
  visit: (doc: number, tfBody: number, tfTitle: number, lenBody: number, lenTitle: number) => void,
): void {
  const read = varints(bytes);
  let doc = 0;
  while (!read.done) {
    doc += read.next();
    visit(doc, read.next(), read.next(), read.next(), read.next());
  }
}

export function decodePostings(bytes: Uint8Array): Posting[] {
  const out: Posting[] = [];
  forEachPosting(bytes, (doc, tfBody, tfTitle, lenBody, lenTitle) => out.push({ doc, tfBody, tfTitle, lenBody, lenTitle }));
  return out;
}

/**
 * What bounds a block's postings from above whatever the corpus statistics: the most a term
 * occurs in either field and the shortest fields. BM25F grows with term frequency and shrinks
 * with field length, so a score computed from the envelope is at least every posting's score.
 * `lenTitle` is the shortest title among postings whose title holds the term (0 when none does).
 */
export interface Envelope {
  count: number;
  tfBody: number;
  tfTitle: number;
  lenBody: number;
  lenTitle: number;
}

export function envelopeOf(postings: Posting[]): Envelope {
  const env: Envelope = { count: postings.length, tfBody: 0, tfTitle: 0, lenBody: Infinity, lenTitle: Infinity };
  for (const p of postings) {
    env.tfBody = Math.max(env.tfBody, p.tfBody);
    env.lenBody = Math.min(env.lenBody, p.lenBody);
    if (p.tfTitle > 0) {
      env.tfTitle = Math.max(env.tfTitle, p.tfTitle);
      env.lenTitle = Math.min(env.lenTitle, p.lenTitle);
    }
  }
  if (env.lenBody === Infinity) env.lenBody = 0;
  if (env.lenTitle === Infinity) env.lenTitle = 0;
  return env;
}

/** A term's blocks in one segment, in the order they were written: each block's impact key and envelope. */
export interface BlockEntry {
  impact: number;
  env: Envelope;
}

export function encodeDirectory(blocks: BlockEntry[]): Uint8Array {
  const out: number[] = [];
  for (const { impact, env } of blocks) for (const v of [impact, env.count, env.tfBody, env.tfTitle, env.lenBody, env.lenTitle]) writeVarint(out, v);
  return Uint8Array.from(out);
}

export function decodeDirectory(bytes: Uint8Array): BlockEntry[] {
  const read = varints(bytes);
  const blocks: BlockEntry[] = [];
  while (!read.done) blocks.push({ impact: read.next(), env: { count: read.next(), tfBody: read.next(), tfTitle: read.next(), lenBody: read.next(), lenTitle: read.next() } });
  return blocks;
}

/**
 * Postings, format 2: chunk numbers and term frequencies only (a chunk's field lengths are its
 * segment's norms, stored once instead of once per term), bit-packed in runs of 128 postings:
 * for each run three bit widths, then the gaps, the body frequencies and the title frequencies
 * at those widths. A common term's posting takes about one byte (format 1: six to eight).
 * Header: the posting count (a varint), so a term's document frequency needs no decoding.
 */
export const POSTINGS_FORMAT = 2;
const RUN = 128;
const widthOf = (v: number) => (v === 0 ? 0 : 32 - Math.clz32(v));

export function encodePostingsV2(postings: Array<Pick<Posting, 'doc' | 'tfBody' | 'tfTitle'>>): Uint8Array {
  const sorted = [...postings].sort((a, b) => a.doc - b.doc);
  const out: number[] = [];
  writeVarint(out, sorted.length);
  let previous = 0;
  for (let start = 0; start < sorted.length; start += RUN) {
    const run = sorted.slice(start, start + RUN);
    const gaps = run.map((p) => {
      const gap = p.doc - previous;
      previous = p.doc;
      return gap;
    });
    const widths = [Math.max(...gaps.map(widthOf)), Math.max(...run.map((p) => widthOf(p.tfBody))), Math.max(...run.map((p) => widthOf(p.tfTitle)))];
    out.push(...widths);
    let acc = 0;
    let bits = 0;
    const put = (value: number, width: number) => {
      for (let written = 0; written < width; ) {
        const take = Math.min(width - written, 8 - bits);
        acc |= ((value >>> written) & ((1 << take) - 1)) << bits;
        bits += take;
        written += take;
        if (bits === 8) {
          out.push(acc);
          acc = 0;
          bits = 0;
        }
      }
    };
    for (const gap of gaps) put(gap, widths[0]!);
    for (const p of run) put(p.tfBody, widths[1]!);
    for (const p of run) put(p.tfTitle, widths[2]!);
    if (bits > 0) out.push(acc);
  }
  return Uint8Array.from(out);
}

/** How many postings format-2 bytes hold (their header). */
export function countPostingsV2(bytes: Uint8Array): number {
  return varints(bytes).next();
}

/** Format-2 postings decoded: chunk numbers and frequencies side by side, `count` of each. */
export interface DecodedPostings {
  count: number;
  docs: Int32Array;
  tfBody: Int32Array;
  tfTitle: Int32Array;
  /** Each posting's BM25F tf-part under the statistics `key` names, kept by ranking (segment-scores.ts). */
  tfParts?: { key: string; values: Float64Array };
}

/**
 * Decodes format-2 postings into arrays (the scoring hot path reads them several times a query).
 * Bits are read a byte at a time into a 32-bit buffer, so a value costs one mask and shift however
 * its bits straddle bytes; widths over 24 bits (gaps in a huge segment) would not fit the buffer
 * and take the byte-by-byte path.
 */
export function decodePostingsV2(bytes: Uint8Array): DecodedPostings {
  const header = varints(bytes);
  const count = header.next();
  let i = header.offset;
  const docs = new Int32Array(count);
  const tfBody = new Int32Array(count);
  const tfTitle = new Int32Array(count);
  let acc = 0;
  let bits = 0;
  const take = (width: number): number => {
    if (width > 24) return takeWide(width);
    while (bits < width) {
      acc |= bytes[i++]! << bits;
      bits += 8;
    }
    const value = acc & ((1 << width) - 1);
    acc >>>= width;
    bits -= width;
    return value;
  };
  const takeWide = (width: number): number => {
    let value = 0;
    for (let got = 0; got < width; got++) {
      if (bits === 0) {
        acc = bytes[i++]!;
        bits = 8;
      }
      value += (acc & 1) * 2 ** got;
      acc >>>= 1;
      bits--;
    }
    return value;
  };
  let doc = 0;
  for (let start = 0; start < count; start += RUN) {
    const end = Math.min(count, start + RUN);
    const wGap = bytes[i++]!;
    const wBody = bytes[i++]!;
    const wTitle = bytes[i++]!;
    for (let k = start; k < end; k++) docs[k] = doc += take(wGap);
    for (let k = start; k < end; k++) tfBody[k] = take(wBody);
    for (let k = start; k < end; k++) tfTitle[k] = take(wTitle);
    // Each run ends on a byte boundary.
    acc = 0;
    bits = 0;
  }
  return { count, docs, tfBody, tfTitle };
}

/** A document's chunks (number and field lengths) as varint triples: a list of maps cost a write a third more. */
export function encodeChunkRefs(refs: Array<{ docNo: number; lenBody: number; lenTitle: number }>): Uint8Array {
  const out: number[] = [];
  for (const r of refs) {
    writeVarint(out, r.docNo);
    writeVarint(out, r.lenBody);
    writeVarint(out, r.lenTitle);
  }
  return Uint8Array.from(out);
}

export function decodeChunkRefs(bytes: Uint8Array): Array<{ docNo: number; lenBody: number; lenTitle: number }> {
  const refs = [];
  const read = varints(bytes);
  while (!read.done) refs.push({ docNo: read.next(), lenBody: read.next(), lenTitle: read.next() });
  return refs;
}

/** A segment's field lengths per chunk position: varint pairs (body, title). */
export function encodeNorms(lengths: Array<{ lenBody: number; lenTitle: number }>): Uint8Array {
  const out: number[] = [];
  for (const l of lengths) {
    writeVarint(out, l.lenBody);
    writeVarint(out, l.lenTitle);
  }
  return Uint8Array.from(out);
}

/** A format-2 segment's field lengths by position (read-only once decoded: searches share them). */
export interface SegmentNorms {
  lenBody: Int32Array;
  lenTitle: Int32Array;
}

export function decodeNorms(bytes: Uint8Array, size: number): SegmentNorms {
  const lenBody = new Int32Array(size);
  const lenTitle = new Int32Array(size);
  const read = varints(bytes);
  for (let local = 0; local < size && !read.done; local++) {
    lenBody[local] = read.next();
    lenTitle[local] = read.next();
  }
  return { lenBody, lenTitle };
}

/** Runs of equal values (a segment's chunks' access classes, in chunk order) as varint pairs (length, value). */
export function encodeRuns(values: ArrayLike<number>): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < values.length; ) {
    let j = i + 1;
    while (j < values.length && values[j] === values[i]) j++;
    writeVarint(out, j - i);
    writeVarint(out, values[i]!);
    i = j;
  }
  return Uint8Array.from(out);
}

/** Visits the runs of `encodeRuns` in order: where each starts, how long it is, its value. */
export function forEachRun(bytes: Uint8Array, visit: (start: number, length: number, value: number) => void): void {
  const read = varints(bytes);
  for (let at = 0; !read.done; ) {
    const run = read.next();
    visit(at, run, read.next());
    at += run;
  }
}

/** The values of `encodeRuns`, one per position (`length` of them; positions past the runs get 0). */
export function decodeRuns(bytes: Uint8Array, length: number): Uint32Array {
  const values = new Uint32Array(length);
  forEachRun(bytes, (start, run, value) => {
    if (start < length) values.fill(value, start, Math.min(length, start + run));
  });
  return values;
}
