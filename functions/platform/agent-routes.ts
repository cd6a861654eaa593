import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { agent, agentInput, agentReleases, agents, createAgent, deleteAgent, patchAgent, presentAgent } from '../../shared/agents';
import { registerReleaseRoutes } from '../../shared/http/release-routes';
import type { AppEnv } from '../../shared/http/context';
import { registerListRoute } from '../../shared/http/crud-routes';
import { etagHeader, ifMatchHeaders, ifMatchOf, preconditionFailed, setEtag } from '../../shared/http/preconditions';
import { ok } from '../../shared/http/envelope';
import { deletedSchema, envelope, errorResponse, jsonContent } from '../../shared/http/openapi-schemas';
import { platformErrors, tokenSecurity } from './openapi';
import type { Runtime } from '../../shared/runtime';

const params = z.object({ agentId: z.string().min(1).max(200) });
const notFound = { 404: jsonContent(errorResponse, 'No such agent in the tenant') };
const scope = (c: Context<AppEnv>) => c.get('platformToken').scope;

/** The tenant's agents: the very records `/v1/agents` serves to its API keys. */
export function registerAgentRoutes(app: OpenAPIHono<AppEnv>, rt: Runtime) {
  registerReleaseRoutes(app, rt, { ...agentReleases, basePath: '/platform/agent', operationNoun: 'PlatformAgent', security: tokenSecurity, errors: { ...notFound, ...platformErrors }, scope });
  registerListRoute(app, rt, {
    path: '/platform/agent',
    operationId: 'listPlatformAgents',
    tag: 'Agents',
    summary: 'List the tenant’s agents, newest first',
    security: tokenSecurity,
    errors: platformErrors,
    item: agent,
    scope,
    list: async (rt, scope, page) => {
      const listed = await agents.list(rt, scope, page);
      return { ...listed, items: listed.items.map(presentAgent) };
    },
  });

  app.openapi(
    createRoute({
      method: 'post',
      path: '/platform/agent',
      operationId: 'createPlatformAgent',
      tags: ['Agents'],
      summary: 'Create an agent',
      security: tokenSecurity,
      request: { body: { content: { 'application/json': { schema: agentInput } }, required: true } },
      responses: { 201: jsonContent(envelope(agent), 'The agent'), ...platformErrors },
    }),
    async (c) => {
      const { record } = await createAgent(rt, scope(c), c.req.valid('json'));
      return ok(c, record, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/platform/agent/{agentId}',
      operationId: 'getPlatformAgent',
      tags: ['Agents'],
      summary: 'Get an agent',
      security: tokenSecurity,
      request: { params },
      responses: { 200: { ...jsonContent(envelope(agent), 'The agent'), headers: etagHeader }, ...notFound, ...platformErrors },
    }),
    async (c) => {
      const found = presentAgent(await agents.get(rt, scope(c), c.req.valid('param').agentId));
      setEtag(c, found);
      return ok(c, found);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/platform/agent/{agentId}',
      operationId: 'updatePlatformAgent',
      tags: ['Agents'],
      summary: 'Update some of an agent’s fields',
      description:
        'JSON merge patch: the fields given replace the current ones, `null` resets a field to its default. The result is validated like a create. With If-Match (the ETag of a GET), applied only while the agent is still at that version (else 412).',
      security: tokenSecurity,
      request: {
        params,
        headers: ifMatchHeaders,
        body: {
          content: { 'application/json': { schema: z.record(z.string(), z.unknown()).openapi({ description: 'Any subset of AgentInput' }), example: { temperature: 0.2, instructions: null } } },
          required: true,
        },
      },
      responses: {
        200: { ...jsonContent(envelope(agent), 'The updated agent'), headers: etagHeader },
        409: jsonContent(errorResponse, 'Modified concurrently; retry'),
        ...preconditionFailed,
        ...notFound,
        ...platformErrors,
      },
    }),
    async (c) => {
      const patched = await patchAgent(rt, scope(c), c.req.valid('param').agentId, c.req.valid('json'), ifMatchOf(c));
      setEtag(c, patched);
      return ok(c, patched);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/platform/agent/{agentId}',
      operationId: 'deletePlatformAgent',
      tags: ['Agents'],
      summary: 'Delete an agent',
      description: 'With If-Match (the ETag of a GET), deleted only while still at that version (else 412).',
      security: tokenSecurity,
      request: { params, headers: ifMatchHeaders },
      responses: { 200: jsonContent(envelope(deletedSchema), 'Deleted'), ...preconditionFailed, ...notFound, ...platformErrors },
    }),
    async (c) => {
      const { agentId } = c.req.valid('param');
      await deleteAgent(rt, scope(c), agentId, ifMatchOf(c));
      return ok(c, { id: agentId, deleted: true as const });
    },
  );
}
