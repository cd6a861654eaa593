import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { type Agent, agentAddress, agentReleases, agents } from '../../shared/agents';
import type { AppEnv } from '../../shared/http/context';
import type { Runtime } from '../../shared/runtime';
import { openAiErrors, openAiSecurity } from './chat-completions';

/**
 * OpenAI's model list over the tenant's agents, so model pickers (`client.models.list()`, Open
 * WebUI) offer them: each agent is a model whose id is the agent id, and each of its aliases one
 * whose id is `<agentId>:<alias>`.
 */
const model = z
  .object({
    id: z.string().openapi({ example: 'agt_01jd8x2k3m4n5p6q7r8s9t0v1w' }),
    object: z.literal('model'),
    created: z.int().openapi({ description: 'Unix seconds' }),
    owned_by: z.string().openapi({ example: 'cairn' }),
    name: z.string().openapi({ description: 'The agent’s name (Cairn extension)' }),
  })
  .openapi('Model');

const asModel = (agent: Agent, alias?: string) => ({
  id: alias ? `${agent.id}:${alias}` : agent.id,
  object: 'model' as const,
  created: Math.floor(Date.parse(agent.createdAt) / 1000),
  owned_by: 'cairn',
  name: alias ? `${agent.name} (${alias})` : agent.name,
});

/** Lists stop here: a model picker has no use for more (the agents API pages through all). */
const MAX_MODELS = 1000;

export function registerModels(app: OpenAPIHono<AppEnv>, rt: Runtime) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/models',
      operationId: 'listModels',
      tags: ['OpenAI-compatible'],
      summary: 'The tenant’s agents as OpenAI models, newest first',
      security: openAiSecurity,
      responses: { 200: { description: 'An OpenAI model list', content: { 'application/json': { schema: z.object({ object: z.literal('list'), data: z.array(model) }) } } }, ...openAiErrors },
    }),
    async (c) => {
      const scope = c.get('identity').scope;
      const data: ReturnType<typeof asModel>[] = [];
      let cursor: string | undefined;
      do {
        const page = await agents.list(rt, scope, { limit: 100, cursor });
        // Each agent, then each of its aliases as `<agentId>:<alias>` (what a release is served as).
        const aliases = await Promise.all(page.items.map((agent) => agentReleases.listAliases(rt, scope, agent.id)));
        page.items.forEach((agent, i) => data.push(asModel(agent), ...aliases[i]!.map((alias) => asModel(agent, alias.name))));
        cursor = page.nextCursor ?? undefined;
      } while (cursor && data.length < MAX_MODELS);
      return c.json({ object: 'list' as const, data: data.slice(0, MAX_MODELS) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/models/{model}',
      operationId: 'getModel',
      tags: ['OpenAI-compatible'],
      summary: 'One agent as an OpenAI model',
      security: openAiSecurity,
      request: { params: z.object({ model: z.string().min(1).max(200) }) },
      responses: { 200: { description: 'An OpenAI model', content: { 'application/json': { schema: model } } }, ...openAiErrors },
    }),
    async (c) => {
      const scope = c.get('identity').scope;
      const { agentId, target } = agentAddress(c.req.valid('param').model);
      const agent = await agents.get(rt, scope, agentId);
      if (target.alias && target.alias !== 'draft') await agentReleases.getAlias(rt, scope, agentId, target.alias);
      if (target.version !== undefined) await agentReleases.getVersion(rt, scope, agentId, target.version);
      return c.json({ ...asModel(agent), id: c.req.valid('param').model }, 200);
    },
  );
}
