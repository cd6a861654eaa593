import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { Precondition } from '../collection';
import { AppError } from '../errors';
import type { AppEnv } from './context';
import { errorResponse, jsonContent } from './openapi-schemas';

/**
 * Optimistic concurrency over HTTP: a record's `ETag` is its version (`"7"`); a write sent with
 * `If-Match` happens only while the record is still at a version it names (else 412
 * PRECONDITION_FAILED, nothing changed). Without If-Match a write behaves as before.
 */
export const etagOf = (version: number) => `"${version}"`;

export function setEtag(c: Context<AppEnv>, record: { version: number }): void {
  c.header('ETag', etagOf(record.version));
}

/** The versions If-Match names (weak tags compare alike); `*` asks only that the record exists. */
export function ifMatchOf(c: Context<AppEnv>): Precondition | undefined {
  const header = c.req.header('if-match')?.trim();
  if (header === undefined || header === '' || header === '*') return undefined;
  const versions: number[] = [];
  for (const tag of header.split(',').map((t) => t.trim())) {
    const version = /^(?:W\/)?"([1-9][0-9]{0,14})"$/.exec(tag)?.[1];
    if (!version) throw new AppError('PRECONDITION_FAILED', `If-Match holds ${JSON.stringify(tag.slice(0, 100))}, which is not an ETag this API gave: send the ETag of a GET`, { field: 'If-Match' });
    versions.push(Number(version));
  }
  return { versions };
}

export const ifMatchHeaders = z.object({
  'if-match': z.string().max(1000).optional().openapi({ description: 'The ETag of the version read: the write happens only if the record is still at it (else 412)', example: '"3"' }),
});

export const etagHeader = { ETag: { description: 'The record’s version, for If-Match', schema: { type: 'string' as const, example: '"3"' } } };

export const preconditionFailed = { 412: jsonContent(errorResponse, 'If-Match names another version than the current one (details.etag): read it again') };
