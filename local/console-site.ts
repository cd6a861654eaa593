import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic } from '@hono/node-server/serve-static';
import { Hono } from 'hono';
import { consoleContentSecurityPolicy } from '../console/content-security-policy';

/** The console's build, committed so `npm start` serves it without a build step. */
export const CONSOLE_DIST = fileURLToPath(new URL('../console/dist', import.meta.url));

/** As CloudFront sends it, and the browser may also PUT large uploads to the local S3 on loopback. */
const CONSOLE_CSP = consoleContentSecurityPolicy(['http://127.0.0.1:*', 'http://localhost:*']);

/**
 * `/console`: the single-page app from `console/dist`. Hashed assets are cached for good; the
 * page itself is revalidated, so a new build shows at the next load.
 */
export function consoleSite() {
  const app = new Hono();
  const index = join(CONSOLE_DIST, 'index.html');
  app.get('/console', (c) => c.redirect('/console/', 301));
  app.use('/console/*', async (c, next) => {
    await next();
    c.header('content-security-policy', CONSOLE_CSP);
    c.header('x-content-type-options', 'nosniff');
    c.header('referrer-policy', 'no-referrer');
    c.header('cache-control', c.req.path.startsWith('/console/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
  });
  app.get('/console/', (c) => {
    if (!existsSync(index)) return c.text('The console is not built: run npm run console:build', 503);
    return c.html(readFileSync(index, 'utf8'));
  });
  app.get('/console/*', serveStatic({ root: CONSOLE_DIST, rewriteRequestPath: (path) => path.replace(/^\/console/, '') }));
  return app;
}
