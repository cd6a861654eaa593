/** Each step kind's config schema, read once from the API's own OpenAPI document (the schemas the API validates with). */
import { signal } from '@preact/signals';
import type { JsonSchema } from './components/schema-fields';

interface OpenApiDocument {
  components: { schemas: Record<string, JsonSchema & { oneOf?: Array<{ $ref?: string } & JsonSchema> }> };
}

export const stepSchemas = signal<Record<string, JsonSchema> | undefined>(undefined);
let loading: Promise<void> | undefined;

/** Starts reading the document (once); `stepSchemas` holds kind → config schema when it has. A failure leaves the JSON view alone. */
export function loadStepSchemas() {
  loading ??= fetch('/v1/openapi.json')
    .then((res) => (res.ok ? (res.json() as Promise<OpenApiDocument>) : Promise.reject(new Error(`HTTP ${res.status}`))))
    .then((doc) => {
      const all = doc.components.schemas;
      const entries = (all.WorkflowStep?.oneOf ?? []).map((s) => (s.$ref ? all[s.$ref.split('/').pop()!] : s));
      stepSchemas.value = Object.fromEntries(
        entries.flatMap((s) => {
          const kind = s?.properties?.type?.enum?.[0];
          const config = s?.properties?.config;
          return typeof kind === 'string' && config ? [[kind, config]] : [];
        }),
      );
    })
    .catch(() => {
      loading = undefined;
    });
}
