import { agent, agentInput } from '../../shared/domain/agent-schema';
import { agents, createAgent, replaceAgent } from '../../shared/domain/agents';
import { createGroupApp, DEFAULT_MAX_BODY_BYTES, type GroupOptions } from '../../shared/http/create-group-app';
import { registerCrud } from '../../shared/http/crud-routes';

/** `/v1/agents`. Conversing with an agent is added by the agents issue. */
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
    remove: (scope, id) => agents.remove(scope, id),
  });
  return app;
}

export const app = createAgentsApp();
