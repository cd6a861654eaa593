import { systemClock } from '../../shared/clock';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Hono } from 'hono';
import { config } from '../../shared/config';
import { loadOnce } from '../../shared/load-once';
import type { AppEnv } from '../../shared/http/context';
import { errorHandler, notFoundResponse } from '../../shared/http/error-handler';
import { requestContext } from '../../shared/http/middleware/request-context';

function assetsDir(): string {
  return config.docsAssetsDir ?? dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
};

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Cairn API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/v1/docs/swagger-ui.css"></head>
<body><div id="ui"></div><script src="/v1/docs/swagger-ui-bundle.js"></script>
<script src="/v1/docs/init.js"></script></body></html>`;

const INIT = `window.ui = SwaggerUIBundle({ url: '/v1/openapi.json', dom_id: '#ui', deepLinking: true,
  persistAuthorization: true });`;

/**
 * `/v1/openapi.json` and the API reference at `/v1/docs`, served without a CDN and without a key.
 * The document is given (the Lambda bundles the generated JSON, not the other groups' code).
 */
export function createApiDocsApp(document: () => unknown) {
  const app = new Hono<AppEnv>();
  // The docs function has no runtime: it serves files and reads nothing else.
  app.use('*', requestContext(systemClock));
  app.onError(errorHandler);
  app.notFound(notFoundResponse);
  const served = loadOnce(async () => document());
  app.get('/v1/openapi.json', async (c) => c.json((await served()) as object));
  app.get('/v1/docs', (c) => c.html(PAGE));
  app.get('/v1/docs/init.js', (c) => c.body(INIT, 200, { 'content-type': 'text/javascript; charset=utf-8' }));
  const cache = new Map<string, Buffer>();
  app.get('/v1/docs/:asset', (c) => {
    const name = c.req.param('asset');
    const type = ASSETS[name];
    if (!type) return notFoundResponse(c);
    let body = cache.get(name);
    if (!body) cache.set(name, (body = readFileSync(join(assetsDir(), name))));
    return c.body(new Uint8Array(body), 200, { 'content-type': type, 'cache-control': 'public, max-age=86400' });
  });
  return app;
}

