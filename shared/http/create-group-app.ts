import type { OpenAPIHono } from '@hono/zod-openapi';
import type { RateArea } from '../plans';
import type { Runtime } from '../runtime';
import { apiKeyAuth } from './middleware/api-key-auth';
import { bodyGuard } from './middleware/body-guard';
import type { AppEnv } from './context';
import { errorHandler, notFoundResponse } from './error-handler';
import { openApiApp } from './openapi-app';
import { rateLimit } from './middleware/rate-limit';
import { requestContext } from './middleware/request-context';
import { cors } from './middleware/cors';
import { originGuard } from './middleware/origin-guard';
import type { MiddlewareHandler } from 'hono';

const openAiErrors: MiddlewareHandler<AppEnv> = async (c, next) => {
  c.set('errorStyle', 'openai');
  await next();
};

export interface GroupOptions {
  area: RateArea;
  /** Largest request body the group accepts. */
  maxBodyBytes: number;
  /** The paths that also take multipart/form-data bodies (file uploads). */
  multipartPaths?: RegExp;
  /** The paths that also take JSON Lines bodies (application/x-ndjson: evaluation cases). */
  jsonLinesPaths?: RegExp;
  /** JSON-RPC endpoints: a JSON body is left to the route to parse (held to the size limit), which answers a parse error in JSON-RPC's shape. */
  jsonRpcPaths?: RegExp;
  /** DNS-rebinding protection (an endpoint a browser page could reach on a user's machine: MCP): see origin-guard.ts. */
  originGuard?: boolean;
  /** Overrides API_KEY_CACHE_SECONDS (tests that revoke keys use 0). */
  apiKeyCacheSeconds?: number;
  /** Paths (and below) that answer errors in OpenAI's shape, authentication errors included. */
  openAiPaths?: string[];
  /** Paths (and below) whose requests carry no API key: each one's `auth` sets the identity instead (inbound hooks, A2A cards, the OAuth callback). */
  selfAuthenticated?: Array<{ path: string; auth: MiddlewareHandler<AppEnv> }>;
}

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/**
 * A route group of the public API: request id → CORS (a preflight is answered here, before any
 * key is asked for) → API key → rate limit → body checks, then the group's routes. Validation failures of any route become the API's 400 naming the field.
 */
export function createGroupApp(rt: Runtime, options: GroupOptions): OpenAPIHono<AppEnv> {
  const app = openApiApp();
  app.use('*', requestContext(rt.clock));
  if (options.originGuard) app.use('*', originGuard());
  app.use('*', cors());
  for (const path of options.openAiPaths ?? []) {
    app.use(path, openAiErrors);
    app.use(`${path}/*`, openAiErrors);
  }
  const byKey = apiKeyAuth(rt, { cacheSeconds: options.apiKeyCacheSeconds });
  const selves = options.selfAuthenticated ?? [];
  const authenticate: MiddlewareHandler<AppEnv> = (c, next) => (selves.find((self) => c.req.path === self.path || c.req.path.startsWith(`${self.path}/`))?.auth ?? byKey)(c, next);
  app.use('*', authenticate);
  app.use('*', rateLimit(rt, options.area));
  app.use('*', bodyGuard(options.maxBodyBytes, { multipartPaths: options.multipartPaths, jsonLinesPaths: options.jsonLinesPaths, jsonRpcPaths: options.jsonRpcPaths }));
  app.onError(errorHandler);
  app.notFound(notFoundResponse);
  return app;
}
