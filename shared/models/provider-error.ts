import { UpstreamError, type AppError } from '../errors';

/**
 * A provider failure as the API reports it: 502 naming the provider and its status, never a 500.
 * Retryable unless the provider refused the request itself (a 4xx other than 408/429 will be
 * refused again).
 */
export function providerError(provider: string, status: number | 'timeout' | 'network' | 'stream', detail?: string, retryAfterSeconds?: number): AppError {
  const what =
    status === 'timeout' ? 'did not answer in time' : status === 'network' ? 'could not be reached' : status === 'stream' ? 'failed mid-stream' : `answered ${status}`;
  const refused = typeof status === 'number' && status >= 400 && status < 500 && status !== 408 && status !== 429;
  return new UpstreamError(
    `Model provider ${provider} ${what}`,
    { provider, status, ...(detail ? { providerMessage: detail.slice(0, 300) } : {}), ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}) },
    { retryable: !refused },
  );
}

/** fetch with the provider's name on every failure. */
export async function providerFetch(provider: string, url: string, init: RequestInit, signal: AbortSignal): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal });
  } catch {
    throw providerError(provider, signal.aborted ? 'timeout' : 'network');
  }
  if (!response.ok) {
    let detail: string | undefined;
    try {
      const body = (await response.json()) as { error?: { message?: string } | string; message?: string };
      detail = typeof body.error === 'string' ? body.error : (body.error?.message ?? body.message);
    } catch {
      // no JSON body
    }
    throw providerError(provider, response.status, detail, retryAfterOf(response.headers.get('retry-after'), response.headers.get('date')));
  }
  return response;
}

/**
 * A Retry-After header's wait in seconds (it gives seconds, or an HTTP date: counted from the
 * response's own Date, the provider's clock, not this machine's); undefined when absent or unreadable.
 */
export function retryAfterOf(header: string | null | undefined, answeredAt: string | null | undefined): number | undefined {
  if (!header) return undefined;
  const seconds = /^\s*\d+(?:\.\d+)?\s*$/.test(header) ? Number(header) : (Date.parse(header) - Date.parse(answeredAt ?? '')) / 1000;
  return Number.isFinite(seconds) ? Math.max(0, Math.ceil(seconds)) : undefined;
}

/** Server-sent events of a response body: each event's data line(s). */
export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<{ event?: string; data: string }> {
  const decoder = new TextDecoder();
  let buffer = '';
  const reader = body.getReader();
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      buffer += decoder.decode(read.value, { stream: true });
      let end: number;
      while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const raw = buffer.slice(0, end);
        buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
        let event: string | undefined;
        const data: string[] = [];
        for (const line of raw.split(/\r?\n/)) {
          if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        }
        if (data.length > 0) yield { event, data: data.join('\n') };
      }
    }
  } finally {
    // A caller that stops reading (the turn was cancelled) closes the connection, as a for-await over the stream would.
    await reader.cancel().catch(() => undefined);
  }
}
