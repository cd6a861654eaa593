/**
 * Fields the server sets on every record. A client may send a record back as it got it: these are
 * then ignored (each API schema declares them as such, from schema-helpers.ts's `readOnlyFields`).
 */
export const READ_ONLY_FIELDS = ['id', 'createdAt', 'updatedAt', 'status', 'version'] as const;

/** `input` without the read-only fields and the `extra` ones its kind of record adds. */
export function withoutReadOnly<T extends Record<string, unknown>>(input: T, extra: readonly string[] = []) {
  const out: Record<string, unknown> = { ...input };
  for (const key of [...READ_ONLY_FIELDS, ...extra]) delete out[key];
  return out;
}
