import { Hono } from 'hono';
import { errorOf } from '../../../test/helpers/http';
import { describe, expect, it } from 'vitest';
import type { AppEnv } from '../context';
import { errorHandler } from '../error-handler';
import { bodyGuard } from './body-guard';

const app = new Hono<AppEnv>();
app.use('*', bodyGuard(100));
app.onError(errorHandler);
app.all('/echo', async (c) => c.json({ body: c.req.method === 'POST' ? await c.req.text() : null }));

/** As a client sends it: with its Content-Length (a Request built here does not add one). */
const post = (body: string, headers: Record<string, string>) =>
  app.request('/echo', { method: 'POST', body, headers: { 'content-length': String(Buffer.byteLength(body)), ...headers } });

describe('bodyGuard', () => {
  it('passes JSON within the limit, JSON variants included', async () => {
    const res = await post('{"a":1}', { 'content-type': 'application/json; charset=utf-8' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ body: '{"a":1}' });
    expect((await post('{}', { 'content-type': 'application/merge-patch+json' })).status).toBe(200);
  });

  it('refuses a body that is not JSON with 415 naming the type', async () => {
    const res = await post('a=1', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(res.status).toBe(415);
    expect((await errorOf(res))).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', details: { contentType: 'application/x-www-form-urlencoded' } });
    expect((await post('{}', {})).status).toBe(415);
  });

  it('refuses a body over the limit with 413 and closes the connection, declared or streamed', async () => {
    const declared = await post(JSON.stringify({ a: 'x'.repeat(200) }), { 'content-type': 'application/json' });
    expect(declared.status).toBe(413);
    expect((await errorOf(declared))).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { limitBytes: 100 } });
    expect(declared.headers.get('connection')).toBe('close');
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(JSON.stringify({ a: 'x'.repeat(200) })));
        controller.close();
      },
    });
    const streamed = await app.request('/echo', { method: 'POST', body: stream, headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, duplex: 'half' });
    expect(streamed.status).toBe(413);
  });

  it('lets requests without a body, and GET, HEAD and DELETE, through unchecked', async () => {
    expect((await app.request('/echo', { method: 'POST' })).status).toBe(200);
    expect((await app.request('/echo', { method: 'GET', headers: { 'content-type': 'text/plain' } })).status).toBe(200);
    expect((await app.request('/echo', { method: 'DELETE', headers: { 'content-type': 'text/plain', 'content-length': '5' } })).status).toBe(200);
  });
});
