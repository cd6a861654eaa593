import type { MiddlewareHandler } from 'hono';
import { cors as honoCors } from 'hono/cors';
import { config } from '../../config';
import type { AppEnv } from '../context';

/**
 * CORS for browser clients (consoles, chat widgets) on the origins CORS_ORIGINS lists (`*` allows
 * any: keys travel in headers, never cookies, so no origin can borrow a caller's credentials; empty,
 * the default, allows none). Preflight requests are answered here, before authentication: a
 * browser sends them without keys. Whatever headers a preflight asks for are allowed: they carry
 * nothing a key does not already guard.
 */
export function cors(origins: readonly string[] = config.corsOrigins): MiddlewareHandler<AppEnv> {
  if (origins.length === 0) return async (_c, next) => next();
  return honoCors({
    origin: origins.includes('*') ? '*' : [...origins],
    allowMethods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    // Empty: a preflight's requested headers are echoed, so browser SDKs' own (the OpenAI SDK's
    // `x-stainless-*`, the MCP SDK's `mcp-protocol-version` and `mcp-session-id`) pass for allowed origins.
    allowHeaders: [],
    exposeHeaders: ['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'Location', 'Idempotent-Replayed'],
    maxAge: 600,
  });
}
