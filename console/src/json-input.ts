/** JSON a person typed into a box: its value, or why it is not JSON, to show at that box. */
export function jsonOf(text: string): { value: unknown } | { reason: string } {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (err) {
    return { reason: (err as Error).message };
  }
}

/**
 * Checks a list of JSON drafts (an agent's tools, a workflow's steps): every draft's parse error is
 * set anew (a fixed draft loses its old one), and the values come back only when all are JSON.
 */
export function checkDrafts<D extends { parseError?: string }>(drafts: D[], text: (d: D) => string): { drafts: D[]; values?: unknown[] } {
  const parsed = drafts.map((d) => jsonOf(text(d)));
  const checked = drafts.map((d, i) => {
    const p = parsed[i]!;
    return { ...d, parseError: 'reason' in p ? `Not JSON: ${p.reason}` : undefined };
  });
  const values = parsed.flatMap((p) => ('value' in p ? [p.value] : []));
  return { drafts: checked, ...(values.length === drafts.length ? { values } : {}) };
}
