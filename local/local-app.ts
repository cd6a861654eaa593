import { Hono } from 'hono';
import { createAgentsApp } from '../functions/agents/app';
import { createApiDocsApp } from '../functions/api-docs/app';
import { createKnowledgeSourcesApp } from '../functions/knowledge-sources/app';
import { createWorkflowsApp } from '../functions/workflows/app';
import type { GroupOptions } from '../shared/http/create-group-app';
import type { AppEnv } from '../shared/http/context';
import { notFoundResponse } from '../shared/http/error-handler';
import { requestContext } from '../shared/http/request-context';

interface Fetchable {
  fetch(request: Request): Response | Promise<Response>;
}

/**
 * Every route group in one app, routed by path prefix exactly as API Gateway routes to the
 * Lambdas: each group's app sees the request as its Lambda would, middleware included.
 */
export function createLocalApp(options: Partial<GroupOptions> = {}) {
  const docs = createApiDocsApp();
  const groups: Array<[string, Fetchable]> = [
    ['/v1/agents', createAgentsApp(options)],
    ['/v1/knowledge-sources', createKnowledgeSourcesApp(options)],
    ['/v1/workflows', createWorkflowsApp(options)],
    ['/v1/openapi.json', docs],
    ['/v1/docs', docs],
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
