/**
 * The console's only door to Cairn: the public API (`/v1`, X-API-Key) and the platform API
 * (`/platform`, Bearer access token), on the origin the console is served from.
 */
import type { Schemas } from './contract';
import { credentials, signOut } from './credentials';

export type Pagination = Schemas['PageMeta']['pagination'];

/** An error as the API words it: code, message, and the field it concerns. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> | undefined,
    readonly requestId: string | undefined,
  ) {
    super(message);
  }
  /** The field the API names (`details.field`), e.g. `steps[2].config.expression`. */
  get field(): string | undefined {
    return typeof this.details?.field === 'string' ? this.details.field : undefined;
  }
}

type Door = 'key' | 'platform';

function headersFor(door: Door, extra?: Record<string, string>): Record<string, string> {
  const c = credentials();
  const auth: Record<string, string> = {};
  if (door === 'key' && c.apiKey) auth['x-api-key'] = c.apiKey;
  if (door === 'platform' && c.platformToken) auth.authorization = `Bearer ${c.platformToken}`;
  return { ...auth, ...extra };
}

const doorOf = (path: string): Door => (path.startsWith('/platform') ? 'platform' : 'key');

/** The API's error body of a failed response as an ApiError (or the HTTP status when there is none). */
export async function errorOf(res: Response): Promise<ApiError> {
  const requestId = res.headers.get('x-request-id') ?? undefined;
  try {
    const body = (await res.json()) as { error?: { code?: string; message?: string; details?: Record<string, unknown> } };
    const e = body.error ?? {};
    return new ApiError(res.status, e.code ?? `HTTP_${res.status}`, e.message ?? res.statusText, e.details, requestId);
  } catch {
    return new ApiError(res.status, `HTTP_${res.status}`, res.statusText || 'The request failed', undefined, requestId);
  }
}

export async function request(method: string, path: string, body?: unknown, signal?: AbortSignal, headers?: Record<string, string>): Promise<Response> {
  const send = () =>
    fetch(path, {
      method,
      headers: headersFor(doorOf(path), { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers }),
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  let res = await send();
  // A read over the key's rate limit waits as long as the API says (up to 10 s) and asks once more;
  // a write is never repeated behind the person's back.
  if (res.status === 429 && method === 'GET') {
    const wait = Math.min(10, Number(res.headers.get('retry-after') ?? 1) || 1);
    await new Promise((r) => setTimeout(r, wait * 1000));
    if (!signal?.aborted) res = await send();
  }
  if (res.status === 401) {
    // A key or token that stopped working: back to sign-in, saying why.
    const error = await errorOf(res);
    signOut(error.message);
    throw error;
  }
  if (!res.ok) throw await errorOf(res);
  return res;
}

/**
 * The write's condition for a record the page read: it goes through only while the record is
 * still at that version, so two tabs editing one record cannot silently overwrite each other.
 */
export const ifMatch = (record: { version: number } | undefined): Record<string, string> | undefined => (record ? { 'if-match': `"${record.version}"` } : undefined);

/** `data` of a success envelope. */
export async function api<T>(method: string, path: string, body?: unknown, signal?: AbortSignal, headers?: Record<string, string>): Promise<T> {
  const res = await request(method, path, body, signal, headers);
  return ((await res.json()) as { data: T }).data;
}

/** A page of a list: `data` and `meta.pagination`. */
export async function apiPage<T>(path: string, signal?: AbortSignal): Promise<{ items: T[]; pagination: Pagination }> {
  const res = await request('GET', path, undefined, signal);
  const body = (await res.json()) as { data: T[]; meta: { pagination: Pagination } };
  return { items: body.data, pagination: body.meta.pagination };
}

/** Every page of a list (for pickers: agents, sources), at most `max` items. */
export async function apiAll<T>(path: string, max = 500): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const page: { items: T[]; pagination: Pagination } = await apiPage<T>(`${path}${sep}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    out.push(...page.items);
    cursor = page.pagination.nextCursor;
  } while (cursor && out.length < max);
  return out;
}

export interface ServerEvent {
  event: string;
  data: unknown;
}

/**
 * Server-sent events of a POST or GET (EventSource cannot send the API key header): yields each
 * event as it arrives; ends when the server closes the stream or `signal` aborts.
 */
export async function* events(method: 'GET' | 'POST', path: string, body?: unknown, signal?: AbortSignal): AsyncGenerator<ServerEvent> {
  const res = await fetch(path, {
    method,
    headers: headersFor(doorOf(path), { accept: 'text/event-stream', ...(body === undefined ? {} : { 'content-type': 'application/json' }) }),
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  if (!res.ok) throw await errorOf(res);
  if (!res.body) return;
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end: number;
    while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
      const parsed = parseEvent(block);
      if (parsed) yield parsed;
    }
  }
}

function parseEvent(block: string): ServerEvent | undefined {
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split(/\r?\n/)) {
    if (line.startsWith('event:')) event = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  if (data.length === 0) return undefined;
  const text = data.join('\n');
  try {
    return { event, data: JSON.parse(text) as unknown };
  } catch {
    return { event, data: text };
  }
}

/**
 * Sends a body with upload progress (fetch has none): multipart file uploads to the API and PUTs
 * to presigned S3 URLs. Resolves with the status and the response's text.
 */
export function sendWithProgress(
  method: string,
  url: string,
  body: XMLHttpRequestBodyInit,
  headers: Record<string, string>,
  onProgress: (fraction: number) => void,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, url);
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => resolve({ status: xhr.status, text: xhr.responseText });
    xhr.onerror = () => reject(new Error(`The upload to ${new URL(url, location.href).host} failed (network or CORS)`));
    xhr.send(body);
  });
}

/** Multipart upload to the API with the signed-in key, or the API's error. */
export async function uploadFiles(path: string, form: FormData, onProgress: (fraction: number) => void): Promise<unknown> {
  const { status, text } = await sendWithProgress('POST', path, form, headersFor('key'), onProgress);
  if (status >= 400) throw await errorOf(new Response(text, { status }));
  return (JSON.parse(text) as { data: unknown }).data;
}
