import { createRoute, z } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import { ok } from '../shared/http/envelope';
import { errorHandler, notFoundResponse } from '../shared/http/error-handler';
import { lazyRoutes, routesDocument, type RegisterRoutes } from '../shared/http/lazy-routes';
import { preloadAll } from '../shared/load-once';
import { bodyGuard } from '../shared/http/middleware/body-guard';
import { requestContext } from '../shared/http/middleware/request-context';
import { openApiApp } from '../shared/http/openapi-app';
import { systemClock } from '../shared/clock';

type Body = { data: Record<string, unknown>; error: { code: string; details: Record<string, unknown> }; special?: string };
const read = async (res: Response) => (await res.json()) as Body;

/** A group app as createGroupApp makes one (request context, a stand-in for the key check, the body guard), with sections counting their loads. */
function group() {
  const app = openApiApp();
  app.use('*', requestContext(systemClock));
  app.use('*', async (c, next) => {
    c.set('identity', { keyId: 'key_1', plan: 'free', scope: { tenantId: 'ten_lazy' } } as never);
    c.header('X-Group', 'yes');
    await next();
  });
  app.use('*', bodyGuard(1024));
  app.onError(errorHandler);
  app.notFound(notFoundResponse);
  const loads = { things: 0, special: 0 };
  let failNext = false;
  const things: RegisterRoutes<string> = (routes, rt) => {
    routes.openapi(
      createRoute({ method: 'get', path: '/v1/things/{id}', request: { params: z.object({ id: z.string() }) }, responses: { 200: { description: 'A thing' } } }),
      (c) => ok(c, { id: c.req.valid('param').id, tenant: c.get('identity').scope.tenantId, rt }),
    );
    routes.openapi(
      createRoute({
        method: 'post',
        path: '/v1/things',
        request: { body: { content: { 'application/json': { schema: z.object({ name: z.string().min(1) }) } }, required: true } },
        responses: { 201: { description: 'Made' } },
      }),
      (c) => ok(c, { name: c.req.valid('json').name }, 201),
    );
  };
  lazyRoutes(app, 'the runtime', ['/v1/things'], async () => {
    loads.things++;
    return things;
  });
  lazyRoutes(app, 'the runtime', ['/v1/things/:id/special'], async () => {
    loads.special++;
    if (failNext) {
      failNext = false;
      throw new Error('the module did not load');
    }
    return (routes) => routes.get('/v1/things/:id/special', (c) => c.json({ special: c.req.param('id') }));
  });
  return { app, loads, failOnce: () => (failNext = true) };
}

describe('lazily built route sections', () => {
  it('loads a section when a request first reaches it, once, and serves it past the group’s middleware', async () => {
    const { app, loads } = group();
    expect(loads).toEqual({ things: 0, special: 0 });
    const res = await app.request('/v1/things/42');
    expect(res.status).toBe(200);
    expect((await read(res)).data).toEqual({ id: '42', tenant: 'ten_lazy', rt: 'the runtime' });
    // The group's middleware ran: its header and the request id are on the answer.
    expect(res.headers.get('x-group')).toBe('yes');
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    await app.request('/v1/things/43');
    expect(loads).toEqual({ things: 1, special: 0 });
  });

  it('reads the body the group’s guard parsed, and validates it as the section’s route says', async () => {
    const { app } = group();
    const made = await app.request('/v1/things', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'kettle' }) });
    expect(made.status).toBe(201);
    expect((await read(made)).data).toEqual({ name: 'kettle' });
    const bad = await app.request('/v1/things', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: '' }) });
    expect(bad.status).toBe(400);
    expect((await read(bad)).error.details).toMatchObject({ field: 'name' });
    // Refused by the group's guard before any section.
    expect((await app.request('/v1/things', { method: 'POST', headers: { 'content-type': 'text/plain', 'content-length': '1' }, body: 'x' })).status).toBe(415);
  });

  it('gives a path to the section with the longest matching path, whatever the order they were declared in', async () => {
    const { app, loads } = group();
    expect(await read(await app.request('/v1/things/7/special'))).toEqual({ special: '7' });
    expect(loads).toEqual({ things: 0, special: 1 });
    expect((await app.request('/v1/things/7/specialty')).status).toBe(404);
    expect(loads).toEqual({ things: 1, special: 1 });
    // No section's path: the group's own 404.
    const none = await app.request('/v1/other');
    expect(none.status).toBe(404);
    expect((await read(none)).error.code).toBe('NOT_FOUND');
  });

  it('tries a section whose load failed again on the next request', async () => {
    const { app, loads, failOnce } = group();
    failOnce();
    const failed = await app.request('/v1/things/1/special');
    expect(failed.status).toBe(500);
    expect((await read(failed)).error.code).toBe('INTERNAL_ERROR');
    expect(await read(await app.request('/v1/things/1/special'))).toEqual({ special: '1' });
    expect(loads.special).toBe(2);
  });

  it('builds every section for the OpenAPI document, and at start when asked to preload (PRELOAD=true)', async () => {
    const documented = group();
    const document = await routesDocument(documented.app, { title: 'Lazy', version: '1' });
    expect(Object.keys(document.paths ?? {}).sort()).toEqual(['/v1/things', '/v1/things/{id}']);
    const preloaded = group();
    expect(preloaded.loads).toEqual({ things: 0, special: 0 });
    // PRELOAD=true: what would load on first use loads at start.
    await preloadAll();
    expect(preloaded.loads).toEqual({ things: 1, special: 1 });
    expect((await preloaded.app.request('/v1/things/9')).status).toBe(200);
    expect(preloaded.loads).toEqual({ things: 1, special: 1 });
  });
});
