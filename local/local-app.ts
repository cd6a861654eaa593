import { Hono } from 'hono';
import { createAgentsApp } from '../functions/agents/app';
import { createApiDocsApp } from '../functions/api-docs/app';
import { createPlatformApp } from '../functions/platform/app';
import { createKnowledgeSourcesApp } from '../functions/knowledge-sources/app';
import { createWorkflowsApp } from '../functions/workflows/app';
import { config } from '../shared/config';
import { handleIngestionMessage, useIngestionQueue, type IngestionMessage } from '../shared/domain/ingestion';
import { consumeStepMessage, useWorkflowQueue, type StepMessage } from '../shared/domain/workflow-execution';
import type { GroupOptions } from '../shared/http/create-group-app';
import { localQueue, type LocalQueue } from '../shared/queue/local-queue';
import type { AppEnv } from '../shared/http/context';
import { notFoundResponse } from '../shared/http/error-handler';
import { requestContext } from '../shared/http/request-context';

let localIngestion: LocalQueue<IngestionMessage> | undefined;
let localSteps: LocalQueue<StepMessage> | undefined;

/** The in-process workflow-steps queue. */
export function localWorkflowQueue(): LocalQueue<StepMessage> | undefined {
  return localSteps;
}

/** The in-process ingestion queue (tests wait on it; shutdown drains it). */
export function localIngestionQueue(): LocalQueue<IngestionMessage> | undefined {
  return localIngestion;
}

interface Fetchable {
  fetch(request: Request): Response | Promise<Response>;
}

/**
 * Every route group in one app, routed by path prefix exactly as API Gateway routes to the
 * Lambdas: each group's app sees the request as its Lambda would, middleware included.
 */
export function createLocalApp(options: Partial<GroupOptions> = {}) {
  // Local mode's workers run in this process, fed by the in-process queue.
  if (!config.ingestionQueueUrl) {
    localIngestion = localQueue('ingestion', handleIngestionMessage);
    useIngestionQueue(localIngestion);
  }
  if (!config.workflowQueueUrl) {
    localSteps = localQueue('workflow-steps', consumeStepMessage, { concurrency: 4 });
    useWorkflowQueue(localSteps);
  }
  const docs = createApiDocsApp();
  const agentsApp = createAgentsApp(options);
  const groups: Array<[string, Fetchable]> = [
    ['/v1/agents', agentsApp],
    ['/v1/chat/completions', agentsApp],
    ['/v1/knowledge-sources', createKnowledgeSourcesApp(options)],
    ['/v1/workflows', createWorkflowsApp(options)],
    ['/v1/openapi.json', docs],
    ['/v1/docs', docs],
    ['/platform', createPlatformApp()],
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
