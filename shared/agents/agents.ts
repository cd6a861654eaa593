import type { Idempotency, Reference } from '../store/records';
import type { TenantScope } from '../tenancy';
import { ConflictError } from '../errors';
import { applyMergePatch } from '../json-objects';
import { parseInput } from '../validation';
import { agentInput, storedAgent, type Agent, type AgentInput } from './agent-schema';
import { prepareTools, presentTools } from './agent-tools';
import { checkAgentGraph } from './agent-graph';
import { collection, type Precondition } from '../collection';
import { withoutReadOnly } from '../read-only';
import type { Runtime } from '../runtime';

export const agents = collection<Agent>('AGENT', 'agent', 'agent', storedAgent);

type AgentFields = Omit<Agent, 'id' | 'createdAt' | 'updatedAt' | 'version'>;

/**
 * The stored fields of an input: its tools' secrets sealed (kept from `current` where not resent),
 * the agents it asks checked (they exist; no loop back to it, no chain too deep).
 */
async function fieldsOf(rt: Runtime, scope: TenantScope, input: AgentInput, current?: Agent): Promise<AgentFields> {
  const tools = await prepareTools(rt, scope, input.tools, current?.tools);
  await checkAgentGraph(rt, scope, (id) => agents.get(rt, scope, id), current?.id, { tools, handoffs: input.handoffs });
  return { ...(withoutReadOnly(input) as AgentFields), tools };
}

/** An agent as responses show it: tool secrets never leave the store. */
export function presentAgent(agent: Agent) {
  return { ...agent, tools: presentTools(agent.tools) };
}

/** Every knowledge source an agent names must exist in the tenant when the agent is written. */
function sourceReferences(input: AgentInput): Reference[] {
  return input.knowledgeSourceIds.map((id, i) => ({ kind: 'KS', id, field: `knowledgeSourceIds[${i}]` }));
}

/** A definition validated as a write validates it: 400 naming the field, knowledge sources that do not exist included. */
export async function validAgentInput(rt: Runtime, scope: TenantScope, given: unknown): Promise<AgentInput> {
  const input = parseInput(agentInput, given);
  await rt.store.records.checkReferences(scope, sourceReferences(input));
  return input;
}

/** A definition validated and made ready to store, without storing it: what an imported version holds. */
export async function preparedAgent(rt: Runtime, scope: TenantScope, given: unknown): Promise<AgentFields> {
  return fieldsOf(rt, scope, await validAgentInput(rt, scope, given));
}

/**
 * Keeps the global entry an A2A client finds the agent by (its card is read without a key) in
 * step with the agent: put while it is published, gone when it is not. The card checks the record
 * too, so an entry left by a failure here publishes nothing.
 */
async function syncPublished(rt: Runtime, scope: TenantScope, agent: Agent, before?: Agent): Promise<void> {
  if (agent.a2a?.enabled) await rt.store.publishedAgents.publish(scope, agent.id);
  else if (before?.a2a?.enabled) await rt.store.publishedAgents.withdraw(agent.id);
}

export async function createAgent(rt: Runtime, scope: TenantScope, input: AgentInput, idempotency?: Idempotency) {
  const created = await agents.create(rt, scope, await fieldsOf(rt, scope, input), { references: sourceReferences(input), idempotency });
  await syncPublished(rt, scope, created.record);
  return { ...created, record: presentAgent(created.record) };
}

export async function replaceAgent(rt: Runtime, scope: TenantScope, id: string, input: AgentInput, precondition?: Precondition) {
  const current = await agents.get(rt, scope, id);
  const fields = await fieldsOf(rt, scope, input, current);
  const replaced = await agents.replace(rt, scope, id, () => fields, sourceReferences(input), precondition);
  await syncPublished(rt, scope, replaced, current);
  return presentAgent(replaced);
}

/** The writable fields of a stored agent, as a client would send them (tool secrets left out: kept). */
export function inputOf(current: Agent): Record<string, unknown> {
  const { id: _id, createdAt: _c, updatedAt: _u, version: _v, ...fields } = presentAgent(current);
  return fields;
}

/**
 * Applies a JSON merge patch: given fields replace the current ones, `null` removes a field so its
 * default applies. The result is validated exactly like a create, so a patch can
 * never store what a PUT would refuse; a concurrent change in between is a 409.
 */
export async function patchAgent(rt: Runtime, scope: TenantScope, id: string, patch: Record<string, unknown>, precondition?: Precondition) {
  const current = await agents.get(rt, scope, id);
  const input = parseInput(agentInput, applyMergePatch(inputOf(current), patch));
  const fields = await fieldsOf(rt, scope, input, current);
  const patched = await agents.replace(
    rt,
    scope,
    id,
    (latest) => {
      if (latest.version !== current.version) throw new ConflictError(`agent ${id} was modified concurrently; retry`, { id });
      return fields;
    },
    sourceReferences(input),
    precondition,
  );
  await syncPublished(rt, scope, patched, current);
  return presentAgent(patched);
}

/**
 * Deletes an agent and what only it could reach: its sessions (messages included) and its memory
 * of every user. The record goes first, so a concurrent converse fails with 404 instead of
 * writing into what is being purged.
 */
export async function deleteAgent(rt: Runtime, scope: TenantScope, id: string, precondition?: Precondition) {
  const removed = await agents.remove(rt, scope, id, precondition);
  if (removed.a2a?.enabled) await rt.store.publishedAgents.withdraw(id);
  await rt.store.releases.of('AGENT', storedAgent).removeAll(scope, id);
  for (const sessionId of await rt.store.sessions.sessionsOf(scope, id)) await rt.store.sessions.deleteSession(scope, id, sessionId);
  for (const userKey of await rt.store.memoryGraph.everyRememberedUser(scope, id)) await rt.store.memoryGraph.deleteMemoryOf(scope, userKey, id);
  return presentAgent(removed);
}
