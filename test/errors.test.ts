import { describe, expect, it } from 'vitest';
import { classifyPgError } from '../shared/knowledge/connectors/postgres';
import { AppError, ConflictError, isRetryable, NotFoundError, RateLimitedError, UnavailableError, ValidationError } from '../shared/errors';
import { providerError } from '../shared/models/provider-error';

const db = { host: 'db.example', port: 5432, database: 'shop' };

describe('one rule for retries', () => {
  it('retries server-side failures and unexpected errors, never the caller’s own', () => {
    expect(isRetryable(new Error('a bug or an untranslated SDK error'))).toBe(true);
    expect(isRetryable(new AppError('INTERNAL_ERROR', 'x'))).toBe(true);
    expect(isRetryable(new UnavailableError('store down'))).toBe(true);
    expect(isRetryable(new RateLimitedError(5, {}))).toBe(true);
    expect(isRetryable(new ValidationError('temperature', 'must be between 0 and 2'))).toBe(false);
    expect(isRetryable(new NotFoundError('agent', 'agt_x'))).toBe(false);
    expect(isRetryable(new ConflictError('taken'))).toBe(false);
  });

  it('retries a provider that was down, slow or throttling, not one that refused the request', () => {
    for (const status of [500, 503, 429, 408, 'timeout', 'network', 'stream'] as const) expect(isRetryable(providerError('openai', status))).toBe(true);
    for (const status of [400, 401, 404, 422]) expect(isRetryable(providerError('openai', status))).toBe(false);
    expect(providerError('openai', 400)).toMatchObject({ code: 'UPSTREAM_ERROR', statusCode: 502 });
  });

  it('classifies PostgreSQL failures by SQLSTATE and network code, not by message text', () => {
    expect(classifyPgError({ code: '28P01', message: 'timeout' }, db)).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'credentials' } });
    const unreachable = classifyPgError(Object.assign(new Error('whatever the driver says'), { code: 'ECONNREFUSED' }), db);
    expect(unreachable).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true, details: { reason: 'not reachable' } });
    // pg's own timeouts and ended connections carry no code. A closed port and a filtered one read
    // alike (the security review: the answer must not work as a port scanner).
    const silent = classifyPgError(new Error('Connection terminated unexpectedly'), db);
    expect(silent).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true, details: { reason: 'not reachable' } });
    expect({ message: silent.message, details: silent.details }).toEqual({ message: unreachable.message, details: unreachable.details });
    expect(classifyPgError({ code: '42P01', message: 'relation does not exist' }, db)).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: false });
    expect(classifyPgError({ code: '53300', message: 'too many connections' }, db)).toMatchObject({ retryable: true });
  });
});
