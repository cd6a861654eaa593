import { useEffect, useState } from 'preact/hooks';
import { jsonOf } from '../json-input';

/** The part of JSON Schema the forms read. */
export interface JsonSchema {
  type?: string;
  description?: string;
  enum?: unknown[];
  default?: unknown;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
}

const SIMPLE = new Set(['boolean', 'string', 'number', 'integer']);

/** A default or an enum's value as a box shows it. */
const shown = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/** Whether every field of an object schema is one a plain input edits. */
export const isFlat = (schema: JsonSchema | undefined) => !!schema?.properties && Object.values(schema.properties).every((p) => SIMPLE.has(p.type ?? ''));

/**
 * The fields of an object's JSON Schema as a form: a checkbox, a choice, a text or number box each,
 * and a small JSON box for anything deeper (objects, lists, unions), read when it loses focus. An
 * emptied box removes its field, so its default applies.
 */
export function SchemaFields({ schema, value, onChange, idPrefix }: { schema: JsonSchema; value: Record<string, unknown>; onChange: (next: Record<string, unknown>) => void; idPrefix: string }) {
  const set = (name: string, v: unknown) => {
    const next = { ...value };
    if (v === undefined) delete next[name];
    else next[name] = v;
    onChange(next);
  };
  return (
    <>
      {Object.entries(schema.properties ?? {}).map(([name, p]) => {
        const id = `${idPrefix}-${name}`;
        const label = `${name}${schema.required?.includes(name) ? ' (required)' : ''}`;
        const hint = p.description ? (
          <p class="muted small" id={`${id}-hint`}>
            {p.description}
          </p>
        ) : null;
        if (p.type === 'boolean') {
          return (
            <div key={name}>
              <label class="check">
                <input id={id} type="checkbox" checked={value[name] === true} onChange={(e) => set(name, e.currentTarget.checked)} aria-describedby={hint ? `${id}-hint` : undefined} /> {label}
              </label>
              {hint}
            </div>
          );
        }
        const field = (control: preact.JSX.Element) => (
          <div class="field" key={name}>
            <label for={id}>{label}</label>
            {control}
            {hint}
          </div>
        );
        const given = value[name];
        if (p.enum) {
          return field(
            <select id={id} value={given === undefined ? '' : shown(given)} onChange={(e) => set(name, e.currentTarget.value === '' ? undefined : p.enum!.find((o) => shown(o) === e.currentTarget.value))}>
              <option value="">{p.default === undefined ? '—' : `default (${shown(p.default)})`}</option>
              {p.enum.map((o) => (
                <option key={shown(o)} value={shown(o)}>
                  {shown(o)}
                </option>
              ))}
            </select>,
          );
        }
        if (p.type === 'string') {
          const props = { id, value: typeof given === 'string' ? given : '', placeholder: p.default === undefined ? undefined : shown(p.default), onInput: (e: Event) => set(name, (e.currentTarget as HTMLInputElement).value || undefined) };
          return field(p.maxLength !== undefined && p.maxLength <= 300 ? <input {...props} /> : <textarea rows={2} {...props} />);
        }
        if (p.type === 'number' || p.type === 'integer') {
          return field(<NumberField id={id} value={typeof given === 'number' ? given : undefined} integer={p.type === 'integer'} placeholder={p.default === undefined ? undefined : shown(p.default)} onChange={(v) => set(name, v)} />);
        }
        return field(<JsonField id={id} value={given} onChange={(v) => set(name, v)} />);
      })}
    </>
  );
}

/** A number as typed ("1." on the way to "1.5" stays), given on as a number; an empty box gives none. */
function NumberField({ id, value, integer, placeholder, onChange }: { id: string; value: number | undefined; integer: boolean; placeholder?: string; onChange: (v: number | undefined) => void }) {
  const [text, setText] = useState(value === undefined ? '' : String(value));
  const read = (raw: string) => (raw.trim() === '' || Number.isNaN(Number(raw)) ? undefined : Number(raw));
  // Changed from outside (the JSON view): show the new value.
  useEffect(() => {
    if (read(text) !== value) setText(value === undefined ? '' : String(value));
  }, [value]);
  return (
    <input
      id={id}
      inputMode={integer ? 'numeric' : 'decimal'}
      value={text}
      placeholder={placeholder}
      onInput={(e) => {
        setText(e.currentTarget.value);
        onChange(read(e.currentTarget.value));
      }}
    />
  );
}

/** One field's value as JSON, read when the box loses focus; what is not JSON stays in the box, said under it. */
function JsonField({ id, value, onChange }: { id: string; value: unknown; onChange: (v: unknown) => void }) {
  const shown = value === undefined ? '' : JSON.stringify(value, null, 2);
  const [problem, setProblem] = useState<string>();
  return (
    <>
      <textarea
        id={id}
        key={shown}
        class="code"
        rows={Math.min(8, shown.split('\n').length + 1)}
        defaultValue={shown}
        aria-invalid={problem ? true : undefined}
        onChange={(e) => {
          const text = e.currentTarget.value.trim();
          if (text === '') return (setProblem(undefined), onChange(undefined));
          const parsed = jsonOf(text);
          if ('reason' in parsed) return setProblem(`Not JSON: ${parsed.reason}`);
          setProblem(undefined);
          onChange(parsed.value);
        }}
      />
      {problem ? (
        <p class="field-error" role="alert">
          {problem}
        </p>
      ) : null}
    </>
  );
}
