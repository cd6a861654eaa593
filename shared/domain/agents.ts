import type { Idempotency, Reference } from '../store/records';
import type { TenantScope } from '../tenancy';
import { ConflictError } from '../errors';
import { applyMergePatch } from '../json-objects';
import { parseInput } from '../validation';
import { agentInput, type Agent, type AgentInput } from './agent-schema';
import { collection } from './collection';
import { withoutReadOnly } from './schema-helpers';
import type { Runtime } from '../runtime';

export const agents = collection<Agent>('AGENT', 'agent', 'agent');

function fieldsOf(input: AgentInput) {
  return withoutReadOnly(input) as Omit<Agent, 'id' | 'createdAt' | 'updatedAt' | 'version'>;
}

/** Every knowledge source an agent names must exist in the tenant when the agent is written. */
function sourceReferences(input: AgentInput): Reference[] {
  return input.knowledgeSourceIds.map((id, i) => ({ kind: 'KS', id, field: `knowledgeSourceIds[${i}]` }));
}

export function createAgent(rt: Runtime, scope: TenantScope, input: AgentInput, idempotency?: Idempotency) {
  return agents.create(rt, scope, fieldsOf(input), { references: sourceReferences(input), idempotency });
}

export function replaceAgent(rt: Runtime, scope: TenantScope, id: string, input: AgentInput) {
  return agents.replace(rt, scope, id, () => fieldsOf(input), sourceReferences(input));
}

/**
 * Removes a deleted knowledge source from every agent that lists it. Runs after the source is
 * deleted: an agent written concurrently either failed its existence check or is found here.
 */
export async function detachKnowledgeSource(rt: Runtime, scope: TenantScope, sourceId: string): Promise<number> {
  const referencing = await rt.store.records.recordsContaining<Agent>(scope, 'AGENT', 'knowledgeSourceIds', sourceId);
  for (const agent of referencing) {
    await rt.store.records.updateRecord<Agent>(scope, 'AGENT', agent.id, (current) => ({
      ...current,
      knowledgeSourceIds: current.knowledgeSourceIds.filter((id) => id !== sourceId),
    }));
  }
  return referencing.length;
}

/** The writable fields of a stored agent, as a client would send them. */
function inputOf(current: Agent): Record<string, unknown> {
  const { id: _id, createdAt: _c, updatedAt: _u, version: _v, ...fields } = current;
  return fields;
}

/**
 * Applies a JSON merge patch: given fields replace the current ones, `null` removes a field so its
 * default applies. The result is validated exactly like a create, so a patch can
 * never store what a PUT would refuse; a concurrent change in between is a 409.
 */
export async function patchAgent(rt: Runtime, scope: TenantScope, id: string, patch: Record<string, unknown>): Promise<Agent> {
  const current = await agents.get(rt, scope, id);
  const input = parseInput(agentInput, applyMergePatch(inputOf(current), patch));
  return agents.replace(rt, 
    scope,
    id,
    (latest) => {
      if (latest.version !== current.version) throw new ConflictError(`agent ${id} was modified concurrently; retry`, { id });
      return fieldsOf(input);
    },
    sourceReferences(input),
  );
}

/**
 * Deletes an agent and what only it could reach: its sessions (messages included) and its memory
 * of every user. The record goes first, so a concurrent converse fails with 404 instead of
 * writing into what is being purged.
 */
export async function deleteAgent(rt: Runtime, scope: TenantScope, id: string): Promise<Agent> {
  const removed = await agents.remove(rt, scope, id);
  for (const sessionId of await rt.store.sessions.sessionsOf(scope, id)) await rt.store.sessions.deleteSession(scope, id, sessionId);
  for (const userKey of await rt.store.memoryGraph.everyRememberedUser(scope, id)) await rt.store.memoryGraph.deleteMemoryOf(scope, userKey, id);
  return removed;
}
