import { Hono } from 'hono';
import { createAgentsApp } from '../functions/agents/app';
import { createApiDocsApp } from '../functions/api-docs/app';
import { createPlatformApp } from '../functions/platform/app';
import { createKnowledgeSourcesApp } from '../functions/knowledge-sources/app';
import { createWorkflowsApp } from '../functions/workflows/app';
import { publicApiDocument } from '../functions/api-docs/public-document';
import type { GroupOptions } from '../shared/http/create-group-app';
import type { AppEnv } from '../shared/http/context';
import { notFoundResponse } from '../shared/http/error-handler';
import { requestContext } from '../shared/http/request-context';
import type { Runtime } from '../shared/runtime';

interface Fetchable {
  fetch(request: Request): Response | Promise<Response>;
}

/**
 * Every route group in one app, routed by path prefix exactly as API Gateway routes to the
 * Lambdas: each group's app sees the request as its Lambda would, middleware included.
 */
export function createLocalApp(rt: Runtime, options: Partial<GroupOptions> = {}) {
  const docs = createApiDocsApp(() => publicApiDocument(rt));
  const agentsApp = createAgentsApp(rt, options);
  const groups: Array<[string, Fetchable]> = [
    ['/v1/agents', agentsApp],
    ['/v1/chat/completions', agentsApp],
    ['/v1/knowledge-sources', createKnowledgeSourcesApp(rt, options)],
    ['/v1/workflows', createWorkflowsApp(rt, options)],
    ['/v1/openapi.json', docs],
    ['/v1/docs', docs],
    ['/platform', createPlatformApp(rt)],
  ];
  // Unknown paths get the API's error body like everything else.
  const fallback = new Hono<AppEnv>();
  fallback.use('*', requestContext());
  fallback.all('*', (c) => notFoundResponse(c));

  const root = new Hono<AppEnv>();
  root.get('/healthz', (c) => c.json({ status: 'ok' }));
  root.all('*', (c) => {
    const path = c.req.path;
    const group = groups.find(([prefix]) => path === prefix || path.startsWith(`${prefix}/`));
    return (group?.[1] ?? fallback).fetch(c.req.raw);
  });
  return root;
}
