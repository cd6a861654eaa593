import { isReady, knowledgeSources } from '../knowledge';
import { parseAddress } from '../releases';
import type { Runtime } from '../runtime';
import type { TenantScope } from '../tenancy';
import type { ToolSpec } from '../models/types';
import type { Agent } from './agent-schema';
import { agents } from './agents';

/**
 * Handoffs: an agent lists the agents it may hand a conversation to (`handoffs`); its model gets a
 * `transfer_to_<name>` tool for each, and calling one moves the conversation — the target answers
 * this same turn with the session's history, and the session's later turns go to it until it hands
 * back. The session stays its first agent's (where it is stored); its assistant messages say who
 * answered (`agentId`) and which handoffs the turn made. A turn never hands to an agent it has
 * already been with, and makes at most MAX_HANDOFFS.
 */
export const MAX_HANDOFFS = 3;

/** One handoff of a turn: from which agent to which (addresses: `agt_…[:release]`). */
export interface Handoff {
  from: string;
  to: string;
}

const slug = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 48);

/**
 * The transfer tools of a turn: one per handoff target the turn has not been with yet, named for
 * the target (its draft's name) and described by what it does and knows (its description and its
 * knowledge sources' names: what the built-in engine weighs a message against).
 */
export async function transferTools(rt: Runtime, scope: TenantScope, agent: Agent, visited: readonly string[]): Promise<Array<ToolSpec & { to: string }>> {
  if (visited.length > MAX_HANDOFFS) return [];
  const targets = (agent.handoffs ?? []).filter((address) => !visited.includes(parseAddress(address)?.id ?? address));
  const tools = await Promise.all(
    targets.map(async (address) => {
      const id = parseAddress(address)?.id ?? address;
      const target = await agents.findRecent(rt, scope, id);
      if (!target) return undefined;
      const sources = await Promise.all(target.knowledgeSourceIds.slice(0, 5).map((ks) => knowledgeSources.findRecent(rt, scope, ks, isReady)));
      const knows = sources.flatMap((s) => (s ? [s.name] : []));
      const description = `Hands the conversation to ${target.name}${target.description ? `, who ${target.description.charAt(0).toLowerCase()}${target.description.slice(1)}` : ''}${knows.length ? ` (knows: ${knows.join(', ')})` : ''}. Call it when the user's message is for ${target.name}.`;
      return { name: `transfer_to_${slug(target.name) || id.slice(-8)}`.slice(0, 64), description, parameters: { type: 'object', properties: {} }, to: address };
    }),
  );
  const seen = new Set<string>();
  return tools.filter((t): t is NonNullable<typeof t> => t !== undefined && !seen.has(t.name) && Boolean(seen.add(t.name)));
}

/** Who holds a session: the agent that answered its last turn, when it is not the session's own. */
export const holderOf = (messages: ReadonlyArray<{ role: string; agentId?: string }>): string | undefined => [...messages].reverse().find((m) => m.role === 'assistant')?.agentId;
