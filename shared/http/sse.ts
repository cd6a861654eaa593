import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { AppError } from '../errors';
import type { AppEnv } from './context';

export interface SseEvent {
  /** The event name; absent: a plain `data:` line (OpenAI's chunks). */
  event?: string;
  /** Sent as JSON, or as is when a string. */
  data: unknown;
  /** The event's id: a client that reconnects sends the last it saw as Last-Event-ID. */
  id?: string;
}

/**
 * Server-sent events: `run` sends events as it goes; an error after the stream started becomes
 * the events `onError` shapes (the status line is long gone), never a leak of internals.
 */
export function sseResponse(
  c: Context<AppEnv>,
  run: (send: (event: SseEvent) => Promise<void>) => Promise<void>,
  onError: (error: AppError) => SseEvent[],
): Response {
  return streamSSE(c, async (stream) => {
    const send = (e: SseEvent) => stream.writeSSE({ ...(e.event ? { event: e.event } : {}), ...(e.id ? { id: e.id } : {}), data: typeof e.data === 'string' ? e.data : JSON.stringify(e.data) });
    try {
      await run(send);
    } catch (error) {
      for (const event of onError(error instanceof AppError ? error : new AppError('INTERNAL_ERROR', 'The reply failed'))) await send(event);
    }
  });
}
