import { documentsOf } from '../release-documents';
import { parseInput } from '../validation';
import { agentInput, storedAgent } from './agent-schema';
import { agents, createAgent, deleteAgent, inputOf, preparedAgent } from './agents';

/**
 * An agent as a portable document (`cairn.agent/v1`): its draft, versions and aliases, with each
 * tool's secret a placeholder. An imported tool whose secret is not given is not given to the model
 * until one is set.
 */
export const agentDocuments = documentsOf({
  kind: 'AGENT',
  shape: storedAgent,
  label: 'agent',
  draft: (rt, scope, id) => agents.get(rt, scope, id),
  inputOf,
  prepare: preparedAgent,
  create: (rt, scope, input, idempotency) => createAgent(rt, scope, parseInput(agentInput, input), idempotency),
  remove: deleteAgent,
  example: { name: 'Support bot', model: 'local/extractive', instructions: 'Answer from the help centre.' },
});
