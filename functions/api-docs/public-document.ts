import { routesOnlyRuntime } from '../../shared/configured-runtime';
import type { GivenPart, RuntimeWith } from '../../shared/runtime';
import { completeDocument } from '../../shared/http/openapi-contract';
import { routesDocument } from '../../shared/http/lazy-routes';
import { createAgentsApp } from '../agents/app';
import { createEvalsApp } from '../evals/app';
import { createKnowledgeSourcesApp } from '../knowledge-sources/app';
import { createMcpApp } from '../mcp/app';
import { createWorkflowsApp } from '../workflows/app';
import { documentStepFields } from '../../shared/workflows';

type OpenApiDocument = ReturnType<ReturnType<typeof createAgentsApp>['getOpenAPI31Document']>;

/**
 * One OpenAPI 3.1 document for the whole public API, from the same zod schemas that validate.
 * Building the apps (lazily registered routes included) only registers routes: the runtime is never called.
 */
export async function publicApiDocument(rt: RuntimeWith<GivenPart> = routesOnlyRuntime()): Promise<OpenApiDocument> {
  const info = {
    title: 'Cairn public API',
    version: '1.0.0',
    description:
      'Agents, knowledge sources and workflows, and an MCP endpoint (`/mcp`) over them. Every call needs the `X-API-Key` header. Responses are ' +
      '`{data, meta}`; errors are `{error: {code, message, details}, meta}`.',
  };
  const parts = await Promise.all([createAgentsApp(rt), createEvalsApp(rt), createKnowledgeSourcesApp(rt), createWorkflowsApp(rt), createMcpApp(rt)].map((group) => routesDocument(group, info)));
  const document: OpenApiDocument = { openapi: '3.1.0', info, paths: {}, components: { schemas: {} } };
  for (const part of parts) {
    Object.assign(document.paths!, part.paths);
    Object.assign(document.components!.schemas!, part.components?.schemas);
  }
  document.components!.securitySchemes = {
    ApiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'The tenant’s API key (`cak_…`)' },
    BearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'Cairn API key', description: 'The same API key as `Authorization: Bearer cak_…`, as OpenAI and MCP clients send it (OpenAI-compatible routes, /mcp)' },
  };
  documentStepFields(document);
  return completeDocument(document, { rateLimited: true, scopeHeaders: false });
}
