import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { AppError } from '../errors';
import { clockOf, type AppEnv } from './context';
import { isoNow } from '../clock';

export interface Meta {
  timestamp: string;
  requestId: string;
  pagination?: { limit: number; nextCursor: string | null; hasMore: boolean };
}

export function meta(c: Context<AppEnv>): Meta {
  return { timestamp: isoNow(clockOf(c)), requestId: c.get('requestId') };
}

/** `{data, meta}` with the status as a literal type, so a route's answer is checked against its OpenAPI responses. */
export function ok<T, S extends ContentfulStatusCode = 200>(c: Context<AppEnv>, data: T, status: S = 200 as S, extraMeta?: Record<string, unknown>) {
  return c.json({ data, meta: { ...meta(c), ...extraMeta } }, status);
}

/** A page of a list; `about` adds what the list says of itself (a session's compaction) to its meta. */
export function okList<T>(c: Context<AppEnv>, items: T[], page: { limit: number; nextCursor: string | null }, about: Record<string, unknown> = {}) {
  const pagination = { limit: page.limit, nextCursor: page.nextCursor, hasMore: page.nextCursor !== null };
  return c.json({ data: items, meta: { ...meta(c), ...about, pagination } }, 200);
}

export function errorBody(c: Context<AppEnv>, error: Pick<AppError, 'code' | 'message' | 'details'>) {
  return {
    error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) },
    meta: meta(c),
  };
}
