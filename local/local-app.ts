import { Hono } from 'hono';
import { createAgentsApp } from '../functions/agents/app';
import { createApiDocsApp } from '../functions/api-docs/app';
import { createEvalsApp } from '../functions/evals/app';
import { createMcpApp } from '../functions/mcp/app';
import { createPlatformApp } from '../functions/platform/app';
import { createKnowledgeSourcesApp } from '../functions/knowledge-sources/app';
import { createWorkflowsApp } from '../functions/workflows/app';
import { publicApiDocument } from '../functions/api-docs/public-document';
import { routeGroupOf, type RouteGroupName } from '../functions/routes';
import type { GroupOptions } from '../shared/http/create-group-app';
import type { AppEnv } from '../shared/http/context';
import { notFoundResponse } from '../shared/http/error-handler';
import { requestContext } from '../shared/http/middleware/request-context';
import type { Runtime } from '../shared/runtime';
import { consoleSite } from './console-site';

interface Fetchable {
  /** `env`: what the adapter gives (the Node server's incoming request: where it arrived). */
  fetch(request: Request, env?: unknown): Response | Promise<Response>;
}

/**
 * Every route group in one app, routed by path prefix exactly as API Gateway routes to the
 * Lambdas: each group's app sees the request as its Lambda would, middleware included.
 */
export function createLocalApp(rt: Runtime, options: Partial<GroupOptions> = {}) {
  const apps: Record<RouteGroupName, Fetchable> = {
    agents: createAgentsApp(rt, options),
    evals: createEvalsApp(rt, options),
    'knowledge-sources': createKnowledgeSourcesApp(rt, options),
    workflows: createWorkflowsApp(rt, options),
    'api-docs': createApiDocsApp(() => publicApiDocument(rt)),
    platform: createPlatformApp(rt),
    mcp: createMcpApp(rt, options),
  };
  // Unknown paths get the API's error body like everything else.
  const fallback = new Hono<AppEnv>();
  fallback.use('*', requestContext(rt.clock));
  fallback.all('*', (c) => notFoundResponse(c));

  const root = new Hono<AppEnv>();
  root.get('/healthz', (c) => c.json({ status: 'ok' }));
  // The web console: static files, calling the API above from the browser like any client.
  const site = consoleSite();
  root.get('/console', (c) => site.fetch(c.req.raw));
  root.get('/console/*', (c) => site.fetch(c.req.raw));
  root.all('*', (c) => {
    const group = routeGroupOf(c.req.path);
    return (group ? apps[group] : fallback).fetch(c.req.raw, c.env);
  });
  return root;
}
