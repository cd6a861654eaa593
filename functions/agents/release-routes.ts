import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import {
  agentAliasShown,
  agentVersionShown,
  deleteAgentAlias,
  deleteAgentVersion,
  diffAgentVersions,
  getAgentAlias,
  getAgentVersion,
  listAgentAliases,
  listAgentVersions,
  publishAgentVersion,
  putAgentAlias,
} from '../../shared/agents';
import type { Context } from 'hono';
import type { AppEnv } from '../../shared/http/context';
import { ok, okList } from '../../shared/http/envelope';
import { commonErrors, envelope, errorResponse, jsonContent, listEnvelope } from '../../shared/http/openapi-schemas';
import { paginationQuery } from '../../shared/http/pagination';
import { aliasInput, aliasName, diffShown, DRAFT, versionNumber } from '../../shared/releases';
import type { Runtime } from '../../shared/runtime';

const security = [{ ApiKeyAuth: [] }];
const tags = ['Agent releases'];
const agentParams = z.object({ agentId: z.string().min(1).max(200) });
const versionParams = agentParams.extend({ version: versionNumber });
const aliasParams = agentParams.extend({ alias: aliasName });
const publishInput = z.strictObject({ description: z.string().max(2000).default('').openapi({ example: 'Shorter answers; order lookup tool' }) }).openapi('PublishVersionRequest', { example: { description: 'Shorter answers; order lookup tool' } });
const conflict = (description: string) => ({ 409: jsonContent(errorResponse, description) });

/**
 * `/v1/agents/{agentId}/versions` and `/aliases`: publish the draft as a numbered version, list,
 * read, diff and delete versions, and route aliases to them by weight.
 */
export function registerAgentReleaseRoutes(app: OpenAPIHono<AppEnv>, rt: Runtime) {
  const scope = (c: Context<AppEnv>) => c.get('identity').scope;

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/agents/{agentId}/versions',
      operationId: 'publishAgentVersion',
      tags,
      summary: 'Publish the draft as the next version',
      description: 'Snapshots the agent as it is now (model and settings, instructions, tools with their sealed credentials, knowledge sources) as an immutable, numbered version. 400 when the draft does not validate; 409 past 500 versions.',
      security,
      request: { params: agentParams, body: { content: { 'application/json': { schema: publishInput } }, required: false } },
      responses: { 201: jsonContent(envelope(agentVersionShown), 'The version'), ...conflict('The agent has 500 versions: delete old ones first'), ...commonErrors },
    }),
    async (c) => {
      const published = await publishAgentVersion(rt, scope(c), c.req.valid('param').agentId, c.req.valid('json').description);
      c.header('Location', `/v1/agents/${published.agentId}/versions/${published.version}`);
      return ok(c, published, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/agents/{agentId}/versions',
      operationId: 'listAgentVersions',
      tags,
      summary: 'An agent’s versions, newest first',
      security,
      request: { params: agentParams, query: paginationQuery },
      responses: { 200: jsonContent(listEnvelope(agentVersionShown), 'A page of versions'), ...commonErrors },
    }),
    async (c) => {
      const page = c.req.valid('query');
      const listed = await listAgentVersions(rt, scope(c), c.req.valid('param').agentId, page);
      return okList(c, listed.items, { limit: page.limit, nextCursor: listed.nextCursor });
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/agents/{agentId}/versions/{version}',
      operationId: 'getAgentVersion',
      tags,
      summary: 'One version of an agent',
      security,
      request: { params: versionParams },
      responses: { 200: jsonContent(envelope(agentVersionShown), 'The version'), ...commonErrors },
    }),
    async (c) => {
      const { agentId, version } = c.req.valid('param');
      return ok(c, await getAgentVersion(rt, scope(c), agentId, version));
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/agents/{agentId}/versions/{version}',
      operationId: 'deleteAgentVersion',
      tags,
      summary: 'Delete a version no alias routes to',
      security,
      request: { params: versionParams },
      responses: {
        200: jsonContent(envelope(z.object({ agentId: z.string(), version: z.int(), deleted: z.literal(true) })), 'Deleted'),
        ...conflict('An alias routes to the version (details.aliases)'),
        ...commonErrors,
      },
    }),
    async (c) => {
      const { agentId, version } = c.req.valid('param');
      return ok(c, await deleteAgentVersion(rt, scope(c), agentId, version));
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/agents/{agentId}/versions/{version}/diff',
      operationId: 'diffAgentVersions',
      tags,
      summary: 'What changed from a version to another (or to the draft)',
      description: 'An RFC 6902 JSON Patch from `version` to `against` (default: the draft). Sealed secrets are never shown: a changed one appears as "[secret changed]".',
      security,
      request: {
        params: versionParams,
        query: z.object({ against: z.union([z.literal(DRAFT), versionNumber]).default(DRAFT).openapi({ description: 'A version number, or draft', example: DRAFT }) }),
      },
      responses: { 200: jsonContent(envelope(diffShown), 'The patch'), ...commonErrors },
    }),
    async (c) => {
      const { agentId, version } = c.req.valid('param');
      return ok(c, await diffAgentVersions(rt, scope(c), agentId, version, c.req.valid('query').against));
    },
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/v1/agents/{agentId}/aliases/{alias}',
      operationId: 'putAgentAlias',
      tags,
      summary: 'Create or move an alias',
      description:
        'Routes the alias to up to 4 versions by integer weight (summing to 100; one entry may omit its weight). New sessions are placed by weight; a session keeps its version while the alias still routes to it. Converse with `alias`, or `model: "<agentId>:<alias>"` on the OpenAI-compatible routes.',
      security,
      request: { params: aliasParams, body: { content: { 'application/json': { schema: aliasInput } }, required: true } },
      responses: { 200: jsonContent(envelope(agentAliasShown), 'The alias'), ...commonErrors },
    }),
    async (c) => {
      const { agentId, alias } = c.req.valid('param');
      return ok(c, await putAgentAlias(rt, scope(c), agentId, alias, c.req.valid('json')));
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/agents/{agentId}/aliases',
      operationId: 'listAgentAliases',
      tags,
      summary: 'An agent’s aliases',
      security,
      request: { params: agentParams },
      responses: { 200: jsonContent(envelope(z.array(agentAliasShown)), 'The aliases'), ...commonErrors },
    }),
    async (c) => ok(c, await listAgentAliases(rt, scope(c), c.req.valid('param').agentId)),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/agents/{agentId}/aliases/{alias}',
      operationId: 'getAgentAlias',
      tags,
      summary: 'One alias of an agent',
      security,
      request: { params: aliasParams },
      responses: { 200: jsonContent(envelope(agentAliasShown), 'The alias'), ...commonErrors },
    }),
    async (c) => {
      const { agentId, alias } = c.req.valid('param');
      return ok(c, await getAgentAlias(rt, scope(c), agentId, alias));
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/agents/{agentId}/aliases/{alias}',
      operationId: 'deleteAgentAlias',
      tags,
      summary: 'Delete an alias',
      security,
      request: { params: aliasParams },
      responses: { 200: jsonContent(envelope(z.object({ agentId: z.string(), name: z.string(), deleted: z.literal(true) })), 'Deleted'), ...commonErrors },
    }),
    async (c) => {
      const { agentId, alias } = c.req.valid('param');
      return ok(c, await deleteAgentAlias(rt, scope(c), agentId, alias));
    },
  );
}
