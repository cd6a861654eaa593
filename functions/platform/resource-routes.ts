import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { knowledgeSources, type KnowledgeSourceRecord } from '../../shared/knowledge';
import { workflow, workflowInput, workflowInputExample, compileDefinition, listWorkflows } from '../../shared/workflows';
import type { AppEnv } from '../../shared/http/context';
import { registerListRoute } from '../../shared/http/crud-routes';
import { ok } from '../../shared/http/envelope';
import { envelope, jsonContent } from '../../shared/http/openapi-schemas';
import { platformErrors, tokenSecurity } from './openapi';
import type { Runtime } from '../../shared/runtime';

const scope = (c: Context<AppEnv>) => c.get('platformToken').scope;

// A fresh object of the same fields, not an extension: OpenAPI would render an extension as an
// `allOf` of two closed objects, which no body satisfies.
const definitionInput = z
  .strictObject({ ...workflowInput.shape, compileOnly: z.boolean().default(false).openapi({ description: 'Only validate and compile; store nothing' }) })
  .openapi('WorkflowDefinitionInput', { example: { ...workflowInputExample, compileOnly: true } });

const compiled = z
  .object({
    valid: z.boolean(),
    errors: z.array(z.object({ path: z.string(), message: z.string() })),
    steps: z.array(z.record(z.string(), z.unknown())).openapi({ description: 'The normalised steps (ids assigned, config hoisted, defaults applied)' }),
    plan: z.object({
      order: z.array(z.string()),
      steps: z.array(z.record(z.string(), z.unknown())),
      branches: z.array(z.object({ step: z.string(), category: z.string(), runs: z.array(z.string()) })),
      conditions: z.array(z.object({ step: z.string(), then: z.array(z.string()), else: z.array(z.string()) })),
    }),
  })
  .openapi('CompiledWorkflow');

const collection = z
  .object({
    id: z.string(),
    name: z.string(),
    type: z.enum(['postgresql', 'file-collection']),
    status: z.string(),
    documents: z.int(),
    chunks: z.int(),
    updatedAt: z.string(),
  })
  .openapi('KnowledgeCollection');

const asCollection = (s: KnowledgeSourceRecord) => ({
  id: s.id,
  name: s.name,
  type: s.type,
  status: s.status,
  documents: s.stats?.documents ?? 0,
  chunks: s.stats?.chunks ?? 0,
  updatedAt: s.updatedAt,
});

/** Workflow definitions (the same records as /v1/workflows) and knowledge collections. */
export function registerResourceRoutes(app: OpenAPIHono<AppEnv>, rt: Runtime) {
  registerListRoute(app, rt, {
    path: '/platform/workflow/definitions',
    operationId: 'listPlatformWorkflowDefinitions',
    tag: 'Workflows',
    summary: 'List the tenant’s workflow definitions, newest first',
    security: tokenSecurity,
    errors: platformErrors,
    item: workflow,
    scope,
    list: listWorkflows,
  });

  app.openapi(
    createRoute({
      method: 'post',
      path: '/platform/workflow/definitions',
      operationId: 'createPlatformWorkflowDefinition',
      tags: ['Workflows'],
      summary: 'Compile a definition, and store it unless compileOnly',
      description:
        'Answers 200 with the compilation (normalised steps, resolved templates, execution order, branches). A valid definition is ' +
        'stored (as /v1/workflows stores it) unless compileOnly; an invalid one is reported in compiled.errors and not stored.',
      security: tokenSecurity,
      request: { body: { content: { 'application/json': { schema: definitionInput } }, required: true } },
      responses: {
        200: jsonContent(envelope(z.object({ compiled, definition: workflow.nullable().optional() })), 'The compilation and the stored definition'),
        ...platformErrors,
      },
    }),
    async (c) => {
      const { compileOnly, ...input } = c.req.valid('json');
      return ok(c, await compileDefinition(rt, scope(c), input, { store: !compileOnly }));
    },
  );

  registerListRoute(app, rt, {
    path: '/platform/knowledge/collections',
    operationId: 'listPlatformKnowledgeCollections',
    tag: 'Knowledge',
    summary: 'List the tenant’s knowledge sources as collections, newest first',
    security: tokenSecurity,
    errors: platformErrors,
    item: collection,
    scope,
    list: (rt, scope, page) => knowledgeSources.list(rt, scope, page),
    map: asCollection,
  });
}
