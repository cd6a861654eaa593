import { systemClock } from '../../clock';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { AppEnv } from '../context';
import { errorHandler } from '../error-handler';
import { requestContext } from './request-context';

const app = new Hono<AppEnv>();
app.use('*', requestContext(systemClock));
app.onError(errorHandler);
app.get('/id', (c) => c.json({ requestId: c.get('requestId') }));
app.get('/fail', () => {
  throw new Error('boom');
});

describe('requestContext', () => {
  it('gives every request an id, in the X-Request-Id header and to the handler', async () => {
    const res = await app.request('/id');
    const id = res.headers.get('x-request-id');
    expect(id).toMatch(/^req_[0-9a-z]{26}$/);
    expect(await res.json()).toEqual({ requestId: id });
  });

  it('keeps a sane id the caller sends, so traces join up, and replaces an unsafe one', async () => {
    const kept = await app.request('/id', { headers: { 'x-request-id': 'trace-1234.abc:9' } });
    expect(kept.headers.get('x-request-id')).toBe('trace-1234.abc:9');
    const replaced = await app.request('/id', { headers: { 'x-request-id': 'bad id <script>' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^req_/);
    expect((await app.request('/id', { headers: { 'x-request-id': 'short' } })).headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('answers errors with the same id in the header and the error body', async () => {
    const res = await app.request('/fail');
    expect(res.status).toBe(500);
    const body = (await res.json()) as { meta: { requestId: string } };
    expect(body.meta.requestId).toBe(res.headers.get('x-request-id'));
    expect(JSON.stringify(body)).not.toContain('boom');
  });
});
