import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { AppEnv } from '../context';
import { cors } from './cors';

/** A bare app behind `cors`, whose one route stands for an authenticated one (it refuses without a key). */
function appWith(origins: string[]) {
  const app = new Hono<AppEnv>();
  app.use('*', cors(origins));
  app.all('/v1/agents', (c) => (c.req.header('x-api-key') ? c.json({ data: [] }) : c.json({ error: { code: 'UNAUTHORIZED' } }, 401)));
  return app;
}

const preflight = (app: Hono<AppEnv>, origin: string) =>
  app.request('/v1/agents', { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key, content-type' } });

describe('cors', () => {
  it('answers a preflight from a listed origin before anything asks for a key', async () => {
    const res = await preflight(appWith(['https://console.example']), 'https://console.example');
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://console.example');
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('x-api-key');
    expect(res.headers.get('access-control-max-age')).toBe('600');
  });

  it('exposes the API’s own headers to a listed origin’s requests', async () => {
    const res = await appWith(['https://console.example']).request('/v1/agents', { headers: { origin: 'https://console.example', 'x-api-key': 'k' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://console.example');
    expect(res.headers.get('access-control-expose-headers')?.toLowerCase()).toContain('x-ratelimit-remaining');
  });

  it('gives an origin it does not list no CORS header (the browser then refuses the response)', async () => {
    const res = await preflight(appWith(['https://console.example']), 'https://evil.example');
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('with no origin listed (the default) adds nothing, and a preflight reaches the routes like any request', async () => {
    const res = await preflight(appWith([]), 'https://console.example');
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.status).toBe(401);
  });

  it('with * allows any origin: keys travel in headers, never cookies', async () => {
    const res = await preflight(appWith(['*']), 'https://anywhere.example');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });
});
