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

  it('refuses JSON that cannot be stored as sent, naming the field: reserved keys, unsafe numbers, deep nesting', async () => {
    const wide = new Hono<AppEnv>();
    wide.use('*', bodyGuard(1024 * 1024));
    wide.onError(errorHandler);
    wide.post('/echo', (c) => c.json({ ok: true }));
    const send = (body: string) => wide.request('/echo', { method: 'POST', body, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } });
    const cases: Array<[string, string]> = [
      ['{"parameters":{"__proto__":{"admin":true}}}', 'parameters.__proto__'],
      ['{"data":{"a":[1,{"constructor":1}]}}', 'data.a[1].constructor'],
      ['{"total":9007199254740993}', 'total'],
      ['{"total":1e308}', 'total'],
      ['{"total":1e400}', 'total'],
      ['{"items":[-1e400]}', 'items[0]'],
      [`{"deep":${'['.repeat(40)}${']'.repeat(40)}}`, `deep${'[0]'.repeat(31)}`],
      [`${'['.repeat(10_000)}${']'.repeat(10_000)}`, `body${'[0]'.repeat(32)}`],
      ['{"a":', 'body'],
    ];
    for (const [body, field] of cases) {
      const res = await send(body);
      expect(res.status, body.slice(0, 40)).toBe(400);
      expect((await errorOf(res)).details).toMatchObject({ field });
    }
    // What can be stored passes: large-but-safe numbers, fractions, 31 levels, ordinary keys.
    const fine = `{"n":9007199254740991,"f":-0.000001,"deep":${'['.repeat(31)}${']'.repeat(31)},"proto":1,"constructorName":"x"}`;
    expect((await send(fine)).status).toBe(200);
  });

  it('lets requests without a body, and GET, HEAD and DELETE, through unchecked', async () => {
    expect((await app.request('/echo', { method: 'POST' })).status).toBe(200);
    expect((await app.request('/echo', { method: 'GET', headers: { 'content-type': 'text/plain' } })).status).toBe(200);
    expect((await app.request('/echo', { method: 'DELETE', headers: { 'content-type': 'text/plain', 'content-length': '5' } })).status).toBe(200);
  });
});
