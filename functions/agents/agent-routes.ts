import type { OpenAPIHono } from '@hono/zod-openapi';
import { agent, agentInput, agentReleases, agents, createAgent, deleteAgent, presentAgent, replaceAgent } from '../../shared/agents';
import type { AppEnv } from '../../shared/http/context';
import { registerCrud } from '../../shared/http/crud-routes';
import { commonErrors } from '../../shared/http/openapi-schemas';
import { registerReleaseRoutes } from '../../shared/http/release-routes';
import type { RuntimeWith } from '../../shared/runtime';
import { registerConversationRoutes } from './conversation-routes';

/** `/v1/agents`: CRUD, versions and aliases, converse and sessions. */
export function registerAgentRoutes(app: OpenAPIHono<AppEnv>, rt: RuntimeWith<'models' | 'secrets' | 'queues'>) {
  registerCrud(app, rt, {
    basePath: '/v1/agents',
    idParam: 'agentId',
    tag: 'Agents',
    noun: 'agent',
    operationNoun: 'Agent',
    input: agentInput,
    output: agent,
    create: createAgent,
    get: async (rt, scope, id) => presentAgent(await agents.get(rt, scope, id)),
    list: async (rt, scope, page) => {
      const listed = await agents.list(rt, scope, page);
      return { ...listed, items: listed.items.map(presentAgent) };
    },
    replace: replaceAgent,
    remove: deleteAgent,
  });
  registerConversationRoutes(app, rt);
  registerReleaseRoutes(app, rt, { ...agentReleases, basePath: '/v1/agents', operationNoun: 'Agent', security: [{ ApiKeyAuth: [] }], errors: commonErrors, scope: (c) => c.get('identity').scope });
}
