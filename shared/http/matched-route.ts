import type { Context } from 'hono';
import type { AppEnv } from './context';

/** The route template a request matched (`/v1/agents/:agentId`), for logs, metrics and spans; a lazily built section's when it served the request. */
export function matchedRoute(c: Context<AppEnv>): string | undefined {
  return c.get('route') ?? [...c.req.matchedRoutes].reverse().find((r) => r.method !== 'ALL' && !r.path.endsWith('*'))?.path;
}
