import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { AppEnv } from '../context';
import { errorHandler } from '../error-handler';
import { originGuard } from './origin-guard';

/** A bare app behind the guard; `env` stands for what an adapter gives (the Node server's incoming request on a port). */
function appWith(origins: string[]) {
  const app = new Hono<AppEnv>();
  app.use('*', originGuard(origins));
  app.post('/mcp', (c) => c.json({ ok: true }));
  app.onError(errorHandler);
  return app;
}
const listening = (port: number) => ({ incoming: { socket: { localPort: port } } });

describe('originGuard', () => {
  it('serves requests without an Origin, from an allowed one and from its own', async () => {
    const app = appWith(['https://console.example']);
    expect((await app.request('http://localhost/mcp', { method: 'POST' })).status).toBe(200);
    expect((await app.request('http://localhost/mcp', { method: 'POST', headers: { origin: 'https://console.example' } })).status).toBe(200);
    expect((await app.request('http://localhost/mcp', { method: 'POST', headers: { origin: 'http://localhost' } })).status).toBe(200);
  });

  it('answers 403 to an Origin that is neither allowed nor its own', async () => {
    const res = await appWith(['https://console.example']).request('http://localhost/mcp', { method: 'POST', headers: { origin: 'https://evil.example' } });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('FORBIDDEN');
  });

  it('where it listens itself, refuses a Host that names another server or another port', async () => {
    const app = appWith([]);
    const post = (host: string) => app.request('http://localhost/mcp', { method: 'POST', headers: { host } }, listening(3000));
    expect((await post('localhost:3000')).status).toBe(200);
    expect((await post('127.0.0.1:3000')).status).toBe(200);
    expect((await post('[::1]:3000')).status).toBe(200);
    expect((await post('evil.example:3000')).status).toBe(403);
    expect((await post('localhost:3001')).status).toBe(403);
  });
});
