import { useEffect, useState } from 'preact/hooks';
import { jsonOf } from '../json-input';
import { loadStepSchemas, stepSchemas } from '../step-schemas';
import type { StepDraft } from '../workflow-model';
import { SchemaFields } from './schema-fields';

/**
 * A step's settings: a form built from its kind's JSON Schema, or the settings as JSON (the
 * advanced view, and the only one while the kind's schema is unknown or the JSON does not parse).
 */
export function StepSettings({ draft, index, invalid, describedBy, onBody }: { draft: StepDraft; index: number; invalid: boolean; describedBy: string; onBody: (body: string) => void }) {
  useEffect(loadStepSchemas, []);
  const [asJson, setAsJson] = useState(false);
  const schema = stepSchemas.value?.[draft.type];
  const parsed = jsonOf(draft.body);
  const value = 'value' in parsed && parsed.value && typeof parsed.value === 'object' && !Array.isArray(parsed.value) ? (parsed.value as Record<string, unknown>) : undefined;
  const formable = schema?.properties && value;
  const label = `Step ${index + 1} settings`;
  return (
    <div class="field">
      <div class="row">
        <strong>{label}</strong>
        {schema?.properties ? (
          <button type="button" class="link" aria-pressed={asJson || !value} disabled={!value} onClick={() => setAsJson(!asJson)}>
            Edit step {index + 1} as JSON
          </button>
        ) : null}
      </div>
      {formable && !asJson ? (
        <fieldset class="schema-form" aria-label={label}>
          <SchemaFields schema={schema} value={value} idPrefix={`step-${index}-config`} onChange={(next) => onBody(JSON.stringify(next, null, 2))} />
        </fieldset>
      ) : (
        <>
          <label for={`step-${index}-body`} class="visually-hidden">
            {label} (JSON)
          </label>
          <textarea
            id={`step-${index}-body`}
            class="code"
            rows={Math.min(12, draft.body.split('\n').length + 1)}
            value={draft.body}
            aria-invalid={invalid ? true : undefined}
            aria-describedby={describedBy}
            onInput={(e) => onBody(e.currentTarget.value)}
          />
        </>
      )}
    </div>
  );
}
