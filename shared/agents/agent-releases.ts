import { z } from '@hono/zod-openapi';
import { ValidationError } from '../errors';
import type { DRAFT} from '../releases';
import { aliasShown, parseAddress, releasesOf, type ReleaseTarget } from '../releases';
import type { Runtime } from '../runtime';
import type { TenantScope } from '../tenancy';
import { agent, storedAgent, type Agent } from './agent-schema';
import { agents, inputOf, presentAgent, validAgentInput } from './agents';
import { agentDocuments } from './agent-documents';

/**
 * An agent's releases: the draft (the agent as PUT and PATCH leave it) published as immutable
 * numbered versions, and aliases that route new sessions to versions by weight. A turn names a
 * version, an alias or neither (the draft); what ran is said on every reply.
 */

export const agentVersionShown = z
  .object({ agentId: z.string(), version: z.int(), description: z.string(), createdAt: z.string(), agent })
  .openapi('AgentVersion');

export const agentAliasShown = aliasShown.extend({ agentId: z.string() }).openapi('AgentAlias');

/** Which definition a turn ran: a version number, or the draft. */
export type AgentVersionRef = number | typeof DRAFT;

const released = releasesOf({
  kind: 'AGENT',
  shape: storedAgent,
  label: 'agent',
  idField: 'agentId',
  draft: (rt, scope, id) => agents.get(rt, scope, id),
  runDraft: (rt, scope, id) => agents.getRecent(rt, scope, id),
  present: presentAgent,
  // The draft must validate as a PUT would now (an agent stored under older rules may not), and its knowledge sources must still exist.
  validate: async (rt, scope, draft) => {
    await validAgentInput(rt, scope, inputOf(draft));
  },
});

/** An agent's releases as the release routes serve them (public and platform API alike). */
export const agentReleases = {
  ...released,
  ...agentDocuments,
  idParam: 'agentId',
  noun: 'agent',
  tag: 'Agent releases',
  versionShown: agentVersionShown,
  shown: agent,
  aliasShown: agentAliasShown,
};

/**
 * An agent named as the OpenAI-compatible routes and MCP take it: `<agentId>`, or with `:<alias>`,
 * `:<version>` or `:draft` after it.
 */
export function agentAddress(model: string, field = 'model'): { agentId: string; target: AgentTarget } {
  const parsed = parseAddress(model);
  if (!parsed) throw new ValidationError(field, `names ${JSON.stringify(model.slice(model.indexOf(':') + 1))} after the agent id: give a version number, an alias or draft`);
  return { agentId: parsed.id, target: parsed.target };
}

/** What a turn asks to run: a version, an alias, or neither (the draft). */
export type AgentTarget = ReleaseTarget;

/**
 * The definition a turn runs, and which it is. Under an alias a session keeps the version its last
 * turn ran while the alias still routes to it (`before`); a new session is placed by weight.
 */
export async function agentForTurn(rt: Runtime, scope: TenantScope, agentId: string, target: AgentTarget, session: { id: string; before?: AgentVersionRef }): Promise<{ agent: Agent; agentVersion: AgentVersionRef }> {
  const { definition, version } = await released.resolve(rt, scope, agentId, target, session.id, session.before);
  return { agent: definition, agentVersion: version };
}
