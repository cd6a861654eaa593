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

/** Calls `visit` for each posting, in chunk order, without allocating (the scoring hot path). */
export function forEachPosting(
  bytes: Uint8Array,
  visit: (doc: number, tfBody: number, tfTitle: number, lenBody: number, lenTitle: number) => void,
): void {
  let i = 0;
  const read = () => {
    let value = 0;
    let scale = 1;
    for (;;) {
      const byte = bytes[i++]!;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 128;
    }
  };
  let doc = 0;
  while (i < bytes.length) {
    doc += read();
    visit(doc, read(), read(), read(), read());
  }
}

export function decodePostings(bytes: Uint8Array): Posting[] {
  const out: Posting[] = [];
  forEachPosting(bytes, (doc, tfBody, tfTitle, lenBody, lenTitle) => out.push({ doc, tfBody, tfTitle, lenBody, lenTitle }));
  return out;
}
