/**
 * A reply's sources are the passages it cites. The model is given numbered passages and cites
 * them [n]; what the caller gets (and the session keeps) lists only those it cited, in the order of
 * their numbers, with the reply's [n] renumbered to match: [k] is sources[k-1]. A reply that cites
 * nothing (a greeting, "I couldn't find…", a model that ignored the instruction) has no sources.
 */

/** [1], [2, 3] and [2,3]: the marks the models (and the built-in engine) write. */
const MARK = /\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]/g;

export function citedOnly<S>(reply: string, sources: S[]): { reply: string; sources: S[] } {
  const cited = new Set<number>();
  for (const mark of reply.matchAll(MARK)) {
    for (const n of mark[1]!.split(',').map(Number)) if (n >= 1 && n <= sources.length) cited.add(n);
  }
  const kept = [...cited].sort((a, b) => a - b);
  const renumbered = new Map(kept.map((n, i) => [n, i + 1]));
  return {
    // A number naming no passage (a [2023] in the text, one past the list) is left as written.
    reply: reply.replace(MARK, (whole, list: string) => {
      const numbers = list.split(',').map((n) => Number(n.trim()));
      return numbers.some((n) => renumbered.has(n)) ? `[${numbers.map((n) => renumbered.get(n) ?? n).join(', ')}]` : whole;
    }),
    sources: kept.map((n) => sources[n - 1]!),
  };
}

/** A text citing `count` sources [1]…[count], its marks moved `offset` on (its sources joined after `offset` others). */
export function shiftedMarks(text: string, offset: number, count: number): string {
  if (offset === 0) return text;
  return text.replace(MARK, (whole, list: string) => {
    const numbers = list.split(',').map((n) => Number(n.trim()));
    return numbers.every((n) => n >= 1 && n <= count) ? `[${numbers.map((n) => n + offset).join(', ')}]` : whole;
  });
}
