import type { Precondition } from '../collection';
import { ValidationError } from '../errors';
import { connectSource, deleteKnowledgeSource, type ConnectRequest, type SourceLink } from '../knowledge';
import type { Runtime } from '../runtime';
import type { TenantScope } from '../tenancy';
import { MAX_AGENT_SOURCES, type Agent } from './agent-schema';
import { agents } from './agents';

/** An agent lists at most MAX_AGENT_SOURCES sources, however it gets them (a PUT checks the same). */
function assertRoomFor(agent: Agent, sourceId: string): void {
  if (!agent.knowledgeSourceIds.includes(sourceId) && agent.knowledgeSourceIds.length >= MAX_AGENT_SOURCES) {
    throw new ValidationError('agentId', `names agent ${agent.id}, which already has ${MAX_AGENT_SOURCES} knowledge sources, the most an agent may have`, {
      limit: MAX_AGENT_SOURCES,
    });
  }
}

/**
 * Linking a source to an agent adds the document-search capability with it: an agent linked to a
 * source is meant to search it. Checked again inside the conditional update, so a concurrent
 * link cannot take the agent past the limit.
 */
function agentLink(rt: Runtime, scope: TenantScope, agentId: string): SourceLink {
  return {
    async check(sourceId) {
      const agent = await agents.find(rt, scope, agentId);
      if (!agent) throw new ValidationError('agentId', `refers to agent ${agentId}, which does not exist`);
      assertRoomFor(agent, sourceId);
    },
    async apply(sourceId) {
      await agents.update(rt, scope, agentId, (agent) => {
        assertRoomFor(agent, sourceId);
        const capabilities = agent.capabilities.includes('document-search') ? agent.capabilities : [...agent.capabilities, 'document-search' as const];
        const knowledgeSourceIds = agent.knowledgeSourceIds.includes(sourceId) ? agent.knowledgeSourceIds : [...agent.knowledgeSourceIds, sourceId];
        return { ...agent, capabilities, knowledgeSourceIds };
      });
    },
  };
}

/** Connects a source (`POST …/connect`), linking it to the agent the request names, if any. */
export function connectKnowledgeSource(rt: Runtime, scope: TenantScope, sourceId: string, request: ConnectRequest & { agentId?: string }) {
  return connectSource(rt, scope, sourceId, request, request.agentId ? agentLink(rt, scope, request.agentId) : undefined);
}

/**
 * Deletes a source, then removes it from every agent that lists it. An agent written concurrently
 * either failed its existence check or is found here.
 */
export async function removeKnowledgeSource(rt: Runtime, scope: TenantScope, sourceId: string, precondition?: Precondition) {
  const removed = await deleteKnowledgeSource(rt, scope, sourceId, precondition);
  const referencing = await agents.containing(rt, scope, 'knowledgeSourceIds', sourceId);
  for (const agent of referencing) {
    await agents.update(rt, scope, agent.id, (current) => ({
      ...current,
      knowledgeSourceIds: current.knowledgeSourceIds.filter((id) => id !== sourceId),
    }));
  }
  return removed;
}
