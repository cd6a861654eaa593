import { agent, agentInput } from '../../shared/domain/agent-schema';
import { agents, createAgent, deleteAgent, replaceAgent } from '../../shared/domain/agents';
import { createGroupApp, DEFAULT_MAX_BODY_BYTES, type GroupOptions } from '../../shared/http/create-group-app';
import { registerCrud } from '../../shared/http/crud-routes';
import { registerChatCompletions } from './chat-completions';
import { registerConversationRoutes } from './conversation-routes';

/** `/v1/agents` (CRUD, converse, sessions) and the OpenAI-compatible `/v1/chat/completions`. */
export function createAgentsApp(options: Partial<GroupOptions> = {}) {
  const app = createGroupApp({ area: 'agents', maxBodyBytes: DEFAULT_MAX_BODY_BYTES, ...options });
  registerCrud(app, {
    basePath: '/v1/agents',
    idParam: 'agentId',
    tag: 'Agents',
    noun: 'agent',
    input: agentInput,
    output: agent,
    create: createAgent,
    get: (scope, id) => agents.get(scope, id),
    list: (scope, page) => agents.list(scope, page),
    replace: replaceAgent,
    remove: deleteAgent,
  });
  registerConversationRoutes(app);
  registerChatCompletions(app);
  return app;
}

export const app = createAgentsApp();
