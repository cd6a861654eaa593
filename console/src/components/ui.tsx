import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api';

/** An error as the API words it (code, message, the field it names, the request id to trace it). */
export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  if (error instanceof ApiError) {
    return (
      <div class="error" role="alert">
        <strong>{error.code}</strong>: {error.message}
        {error.requestId ? <small> (request {error.requestId})</small> : null}
      </div>
    );
  }
  return (
    <div class="error" role="alert">
      {error instanceof Error ? error.message : JSON.stringify(error)}
    </div>
  );
}

/** The message under an input when the API's error names that field (or one inside it). */
export function FieldError({ error, field, id, exact }: { error: unknown; field: string; id?: string; exact?: boolean }) {
  const message = fieldMessage(error, field, exact);
  return message ? (
    <p class="field-error" id={id} role="alert">
      {message}
    </p>
  ) : null;
}

/** The API's message when its error names `field` or something inside it. */
export function fieldMessage(error: unknown, field: string, exact = false): string | undefined {
  if (!(error instanceof ApiError) || !error.field) return undefined;
  const f = error.field;
  if (f === field || (!exact && (f.startsWith(`${field}.`) || f.startsWith(`${field}[`)))) return `${f} ${typeof error.details?.reason === 'string' ? error.details.reason : error.message}`;
  return undefined;
}

/** A table with column headings; an empty heading is an actions column (named for screen readers). */
export function Table({ columns, children }: { columns: string[]; children: ComponentChildren }) {
  return (
    <table>
      <thead>
        <tr>
          {columns.map((c, i) => (
            <th scope="col" key={i}>
              {c || <span class="visually-hidden">Actions</span>}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}

/** Figures side by side, each under its label; `live` announces their changes to screen readers. */
export function Stats({ items, live }: { items: Array<[label: string, value: ComponentChildren]>; live?: boolean }) {
  return (
    <dl class="stats" aria-live={live ? 'polite' : undefined}>
      {items.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <p>
        <strong>{title}</strong>
      </p>
      {children}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {what}…
    </p>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status}`}>{status}</span>;
}

/**
 * Loads something when `deps` change: `{value, error, loading, reload}`. A newer load wins over an
 * older one still in flight.
 */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ value?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const controller = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    load(controller.signal).then(
      (value) => !controller.signal.aborted && setState({ value, loading: false }),
      (error: unknown) => !controller.signal.aborted && setState({ error, loading: false }),
    );
    return () => controller.abort();
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}

/**
 * What a form or button does: `run(work)` clears the last error, is `busy` while the work runs,
 * and keeps its error to show (`setError` for one found before anything is sent).
 */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  async function run(work: () => Promise<unknown>) {
    setBusy(true);
    setError(undefined);
    try {
      await work();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return { busy, error, setError, run };
}

/** Calls `fn` every `ms` while `active`. */
export function useInterval(fn: () => void, ms: number, active: boolean) {
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(fn, ms);
    return () => clearInterval(timer);
  }, [active, ms]);
}

export function formatDate(iso: string | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

export function formatBytes(n: number | undefined): string {
  if (n === undefined) return '—';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** Text with the query's words marked (search results' snippets). */
export function Highlighted({ text, query }: { text: string; query: string }) {
  const words = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]{2,}/gu) ?? [])];
  if (words.length === 0) return <>{text}</>;
  const escaped = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  // Whole words and their inflections (return → returned), as the index's stemming finds them.
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])((?:${escaped.join('|')})[\\p{L}]{0,3})(?![\\p{L}\\p{N}])`, 'giu');
  const parts = text.split(pattern);
  return <>{parts.map((part, i) => (i % 2 === 1 ? <mark key={i}>{part}</mark> : part))}</>;
}
