import { createGroupApp, DEFAULT_MAX_BODY_BYTES, type GroupOptions } from '../../shared/http/create-group-app';
import { lazyRoutes } from '../../shared/http/lazy-routes';
import type { RuntimeWith } from '../../shared/runtime';

/**
 * `/mcp`: the tenant's agents, knowledge and workflows for MCP clients (Streamable HTTP). The API
 * key comes as `X-API-Key` or `Authorization: Bearer`, and counts against the agents area's rate
 * limits. Stateless: every request gets its own server and transport, so any instance (any
 * Lambda) answers any request; answers are JSON, not event streams (GET, for a server-sent stream,
 * and DELETE are 405s).
 */
export function createMcpApp(rt: RuntimeWith<'models' | 'secrets' | 'queues'>, options: Partial<GroupOptions> = {}) {
  // MCP's transport requires servers to check Origin (and, where they listen on a user's machine, Host): DNS rebinding.
  const app = createGroupApp(rt, { area: 'agents', maxBodyBytes: DEFAULT_MAX_BODY_BYTES, originGuard: true, ...options });
  // The MCP server and the tools behind it load with the first request (lazyRoutes).
  lazyRoutes(app, rt, ['/mcp'], async () => (await import('./mcp-routes')).registerMcpRoutes);
  return app;
}
