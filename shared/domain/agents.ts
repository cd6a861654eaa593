import type { Idempotency, Reference } from '../store/records';
import { recordsContaining, updateRecord } from '../store/records';
import type { TenantScope } from '../tenancy';
import type { Agent, AgentInput } from './agent-schema';
import { collection } from './collection';
import { withoutReadOnly } from './schema-helpers';

export const agents = collection<Agent>('AGENT', 'agent', 'agent');

function fieldsOf(input: AgentInput) {
  return withoutReadOnly(input) as Omit<Agent, 'id' | 'createdAt' | 'updatedAt' | 'version'>;
}

/** Every knowledge source an agent names must exist in the tenant when the agent is written. */
function sourceReferences(input: AgentInput): Reference[] {
  return input.knowledgeSourceIds.map((id, i) => ({ kind: 'KS', id, field: `knowledgeSourceIds[${i}]` }));
}

export function createAgent(scope: TenantScope, input: AgentInput, idempotency?: Idempotency) {
  return agents.create(scope, fieldsOf(input), { references: sourceReferences(input), idempotency });
}

export function replaceAgent(scope: TenantScope, id: string, input: AgentInput) {
  return agents.replace(scope, id, () => fieldsOf(input), sourceReferences(input));
}

/**
 * Removes a deleted knowledge source from every agent that lists it. Runs after the source is
 * deleted: an agent written concurrently either failed its existence check or is found here.
 */
export async function detachKnowledgeSource(scope: TenantScope, sourceId: string): Promise<number> {
  const referencing = await recordsContaining<Agent>(scope, 'AGENT', 'knowledgeSourceIds', sourceId);
  for (const agent of referencing) {
    await updateRecord<Agent>(scope, 'AGENT', agent.id, (current) => ({
      ...current,
      knowledgeSourceIds: current.knowledgeSourceIds.filter((id) => id !== sourceId),
    }));
  }
  return referencing.length;
}
