import { agent, agentInput, agentReleases, agents, createAgent, deleteAgent, presentAgent, replaceAgent } from '../../shared/agents';
import { OPENAI_PATHS } from '../../shared/http/error-handler';
import { createGroupApp, DEFAULT_MAX_BODY_BYTES, type GroupOptions } from '../../shared/http/create-group-app';
import { registerCrud } from '../../shared/http/crud-routes';
import { commonErrors } from '../../shared/http/openapi-schemas';
import { registerReleaseRoutes } from '../../shared/http/release-routes';
import { registerChatCompletions } from './chat-completions';
import { registerConversationRoutes } from './conversation-routes';
import { registerModels } from './models';
import { registerResponses } from './responses';
import { registerTraces } from './trace-routes';
import { registerUsage } from './usage-routes';
import { EVAL_JSON_LINES_PATHS, registerEvalRoutes } from './eval-routes';
import { registerEndUserRoutes } from './end-user-routes';
import type { RuntimeWith } from '../../shared/runtime';

/** `/v1/agents` (CRUD, converse, sessions), the OpenAI-compatible `/v1/chat/completions` and `/v1/models`, and evaluations (`/v1/eval-datasets`). */
export function createAgentsApp(rt: RuntimeWith<'models' | 'secrets' | 'queues'>, options: Partial<GroupOptions> = {}) {
  const app = createGroupApp(rt, { area: 'agents', maxBodyBytes: DEFAULT_MAX_BODY_BYTES, openAiPaths: [...OPENAI_PATHS], jsonLinesPaths: EVAL_JSON_LINES_PATHS, ...options });
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
  registerChatCompletions(app, rt);
  registerModels(app, rt);
  registerResponses(app, rt);
  registerUsage(app, rt);
  registerTraces(app, rt);
  registerEvalRoutes(app, rt);
  registerEndUserRoutes(app, rt);
  return app;
}

