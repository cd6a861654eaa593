// Apart from the step schemas, so that documents are completed without building them.

/** Marks, in the generated document, a field that may be given on the step itself instead of in its `config`. */
export const AS_IN_CONFIG = 'x-cairn-as-in-config';

type JsonSchema = { properties?: Record<string, JsonSchema & { [AS_IN_CONFIG]?: boolean }> };

/**
 * Documents each step field given on the step itself as the same field of its `config`, in a
 * generated OpenAPI document. The document copies what the generator wrote for `config` once, when
 * it is made, instead of every process rendering each field's JSON Schema as it starts.
 */
export function documentStepFields(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) documentStepFields(item);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const properties = (node as JsonSchema).properties;
  const inConfig = properties?.config?.properties;
  if (properties && inConfig) {
    for (const [key, field] of Object.entries(properties)) if (field[AS_IN_CONFIG]) properties[key] = structuredClone(inConfig[key]!);
  }
  for (const value of Object.values(node)) documentStepFields(value);
}
