import { NotFoundError, ValidationError } from '../errors';
import { cachedReleases, DRAFT, parseAddress, type ReleaseTarget } from '../releases';
import type { Runtime } from '../runtime';
import type { StoredTool } from '../tools';
import type { TenantScope } from '../tenancy';
import { storedAgent, type Agent } from './agent-schema';

/**
 * Which agents an agent asks (its `agent` tools): checked when it is written so that no chain of
 * them loops or runs deeper than MAX_AGENT_DEPTH below the agent a person talks to. A turn checks
 * again as it goes (a release may have changed since): there a loop or a chain too deep is a tool
 * error, never a loop. Handoffs move a conversation rather than nest it: they may go back and
 * forth (a target hands back), so only their targets' existence is checked here.
 */
export const MAX_AGENT_DEPTH = 3;

/** The agents one definition asks: its agent tools' targets, each with the field that names it. */
const askedAgents = (definition: { tools?: readonly StoredTool[] }) =>
  (definition.tools ?? []).flatMap((tool, i) => (tool.type === 'agent' ? [{ address: String(tool.agent), field: `tools[${i}].agent` }] : []));

/** An agent's draft (a NotFoundError when there is none). */
type DraftOf = (agentId: string) => Promise<Agent>;

/** Every definition a turn of `address` may run: the draft, the version, or each version its alias routes to. */
async function definitionsOf(rt: Runtime, scope: TenantScope, draftOf: DraftOf, address: string, field: string): Promise<{ id: string; target: ReleaseTarget; definitions: Agent[] }> {
  const parsed = parseAddress(address);
  if (!parsed) throw new ValidationError(field, `names ${JSON.stringify(address.slice(address.indexOf(':') + 1))} after the agent id: give a version number, an alias or draft`);
  const { id, target } = parsed;
  const releases = cachedReleases(rt, 'AGENT', storedAgent, 'agent');
  try {
    if (target.version !== undefined) return { id, target, definitions: [(await releases.version(scope, id, target.version)).snapshot] };
    if (target.alias === undefined || target.alias === DRAFT) return { id, target, definitions: [await draftOf(id)] };
    const alias = await releases.alias(scope, id, target.alias);
    return { id, target, definitions: await Promise.all(alias.routing.map(async (r) => (await releases.version(scope, id, r.version)).snapshot)) };
  } catch (error) {
    if (error instanceof NotFoundError) throw new ValidationError(field, `refers to ${address}, which does not exist in this tenant`);
    throw error;
  }
}

/**
 * That the agents a definition names exist (each release named), and that none leads back to
 * `selfId` nor further than MAX_AGENT_DEPTH agents below it: a 400 naming the field otherwise.
 */
export async function checkAgentGraph(rt: Runtime, scope: TenantScope, draftOf: DraftOf, selfId: string | undefined, definition: { tools?: readonly StoredTool[]; handoffs?: readonly string[] }): Promise<void> {
  for (const [i, address] of (definition.handoffs ?? []).entries()) {
    const { id } = await definitionsOf(rt, scope, draftOf, address, `handoffs[${i}]`);
    if (id === selfId) throw new ValidationError(`handoffs[${i}]`, 'names this agent itself');
  }
  // How deep each agent's own chain goes below it (memoized by address): 0 for one that asks none.
  const heights = new Map<string, number>();
  const below = async (address: string, field: string, path: string[]): Promise<number> => {
    const known = heights.get(address);
    if (known !== undefined) return known;
    const { id, definitions } = await definitionsOf(rt, scope, draftOf, address, field);
    if (id === selfId || path.includes(id)) throw new ValidationError(field, `makes a loop: ${[...path, id].join(' → ')}`);
    let height = 0;
    for (const d of definitions) {
      for (const next of askedAgents(d)) height = Math.max(height, 1 + (await below(next.address, field, [...path, id])));
      if (path.length + height > MAX_AGENT_DEPTH + 1) break;
    }
    heights.set(address, height);
    return height;
  };
  const self = selfId ?? 'this agent';
  for (const named of askedAgents(definition)) {
    const depth = 1 + (await below(named.address, named.field, [self]));
    if (depth > MAX_AGENT_DEPTH) throw new ValidationError(named.field, `leads to a chain of ${depth} agents below this one; at most ${MAX_AGENT_DEPTH} are allowed`);
  }
}
