import { z } from '@hono/zod-openapi';
import { NotFoundError, ValidationError } from '../errors';
import { aliasName, aliasShown, cachedReleases, DRAFT, diffOf, MAX_VERSIONS, presentAlias, routingOf, versionForSession, type aliasInput } from '../releases';
import type { Runtime } from '../runtime';
import type { TenantScope } from '../tenancy';
import { parseInput } from '../validation';
import { agent, agentInput, storedAgent, type Agent } from './agent-schema';
import { agents, inputOf, presentAgent } from './agents';

/**
 * An agent's releases: the draft (the agent as PUT and PATCH leave it) published as immutable
 * numbered versions, and aliases that route new sessions to versions by weight. A turn names a
 * version, an alias or neither (the draft); what ran is said on every reply.
 */

const releases = (rt: Runtime) => cachedReleases(rt, 'AGENT', storedAgent, 'agent');

export const agentVersionShown = z
  .object({ agentId: z.string(), version: z.int(), description: z.string(), createdAt: z.string(), agent })
  .openapi('AgentVersion');

export const agentAliasShown = aliasShown.extend({ agentId: z.string() }).openapi('AgentAlias');

/** Which definition a turn ran: a version number, or the draft. */
export type AgentVersionRef = number | typeof DRAFT;

const presentVersion = (agentId: string, v: { version: number; description: string; createdAt: string; snapshot: Agent }) => ({
  agentId,
  version: v.version,
  description: v.description,
  createdAt: v.createdAt,
  agent: presentAgent(v.snapshot),
});

/**
 * Snapshots the draft as the next version. The draft must validate as a PUT would now (an agent
 * stored under older rules may not), and its knowledge sources must still exist.
 */
export async function publishAgentVersion(rt: Runtime, scope: TenantScope, agentId: string, description: string) {
  const draft = await agents.get(rt, scope, agentId);
  const input = parseInput(agentInput, inputOf(draft));
  for (const [i, id] of input.knowledgeSourceIds.entries()) {
    if (!(await rt.store.records.exists(scope, 'KS', id))) throw new ValidationError(`knowledgeSourceIds[${i}]`, `refers to knowledge source ${id}, which does not exist`);
  }
  return presentVersion(agentId, await releases(rt).store.publish(scope, agentId, draft, description, MAX_VERSIONS));
}

export async function listAgentVersions(rt: Runtime, scope: TenantScope, agentId: string, page: { limit: number; cursor?: string }) {
  await agents.get(rt, scope, agentId);
  const listed = await releases(rt).store.listVersions(scope, agentId, page);
  return { items: listed.items.map((v) => presentVersion(agentId, v)), nextCursor: listed.nextCursor };
}

export async function getAgentVersion(rt: Runtime, scope: TenantScope, agentId: string, version: number) {
  await agents.get(rt, scope, agentId);
  return presentVersion(agentId, await releases(rt).version(scope, agentId, version));
}

export async function deleteAgentVersion(rt: Runtime, scope: TenantScope, agentId: string, version: number) {
  await agents.get(rt, scope, agentId);
  await releases(rt).store.removeVersion(scope, agentId, version);
  releases(rt).forget(scope, agentId, { version });
  return { agentId, version, deleted: true as const };
}

/** The definition `ref` names: a version's snapshot, or the draft. */
async function definitionOf(rt: Runtime, scope: TenantScope, agentId: string, ref: AgentVersionRef): Promise<Agent> {
  return ref === DRAFT ? agents.get(rt, scope, agentId) : (await releases(rt).version(scope, agentId, ref)).snapshot;
}

/** An RFC 6902 patch from one version (or the draft) to another; secrets only as changed. */
export async function diffAgentVersions(rt: Runtime, scope: TenantScope, agentId: string, from: AgentVersionRef, to: AgentVersionRef) {
  const [a, b] = await Promise.all([definitionOf(rt, scope, agentId, from), definitionOf(rt, scope, agentId, to)]);
  return { from, to, changes: diffOf(a, b) };
}

export async function putAgentAlias(rt: Runtime, scope: TenantScope, agentId: string, name: string, input: z.infer<typeof aliasInput>) {
  await agents.get(rt, scope, agentId);
  const alias = await releases(rt).store.putAlias(scope, agentId, name, routingOf(input));
  releases(rt).forget(scope, agentId, { alias: name });
  return { agentId, ...presentAlias(alias) };
}

export async function listAgentAliases(rt: Runtime, scope: TenantScope, agentId: string) {
  await agents.get(rt, scope, agentId);
  return (await releases(rt).store.listAliases(scope, agentId)).map((a) => ({ agentId, ...presentAlias(a) }));
}

export async function getAgentAlias(rt: Runtime, scope: TenantScope, agentId: string, name: string) {
  await agents.get(rt, scope, agentId);
  return { agentId, ...presentAlias(await releases(rt).alias(scope, agentId, name)) };
}

export async function deleteAgentAlias(rt: Runtime, scope: TenantScope, agentId: string, name: string) {
  await agents.get(rt, scope, agentId);
  const existed = await releases(rt).store.removeAlias(scope, agentId, name);
  releases(rt).forget(scope, agentId, { alias: name });
  if (!existed) throw new NotFoundError('agent alias', `${agentId}:${name}`);
  return { agentId, name, deleted: true as const };
}

/**
 * An agent named as the OpenAI-compatible routes and MCP take it: `<agentId>`, or with `:<alias>`,
 * `:<version>` or `:draft` after it.
 */
export function agentAddress(model: string, field = 'model'): { agentId: string; target: AgentTarget } {
  const at = model.indexOf(':');
  if (at < 0) return { agentId: model, target: {} };
  const agentId = model.slice(0, at);
  const name = model.slice(at + 1);
  if (/^[1-9][0-9]{0,8}$/.test(name)) return { agentId, target: { version: Number(name) } };
  if (name !== DRAFT && !aliasName.safeParse(name).success) throw new ValidationError(field, `names ${JSON.stringify(name)} after the agent id: give a version number, an alias or draft`);
  return { agentId, target: { alias: name } };
}

/** What a turn asks to run: a version, an alias, or neither (the draft). */
export interface AgentTarget {
  version?: number;
  alias?: string;
}

/**
 * The definition a turn runs, and which it is. Under an alias a session keeps the version its last
 * turn ran while the alias still routes to it (`before`); a new session is placed by weight.
 */
export async function agentForTurn(rt: Runtime, scope: TenantScope, agentId: string, target: AgentTarget, session: { id: string; before?: AgentVersionRef }): Promise<{ agent: Agent; agentVersion: AgentVersionRef }> {
  if (target.version !== undefined) return { agent: (await releases(rt).version(scope, agentId, target.version)).snapshot, agentVersion: target.version };
  if (target.alias === undefined || target.alias === DRAFT) return { agent: await agents.get(rt, scope, agentId), agentVersion: DRAFT };
  const alias = await releases(rt).alias(scope, agentId, target.alias);
  const version = versionForSession(alias.routing, session.id, typeof session.before === 'number' ? session.before : undefined);
  return { agent: (await releases(rt).version(scope, agentId, version)).snapshot, agentVersion: version };
}

/** An agent's releases as the release routes serve them (public and platform API alike). */
export const agentReleases = {
  idParam: 'agentId',
  noun: 'agent',
  tag: 'Agent releases',
  versionShown: agentVersionShown,
  aliasShown: agentAliasShown,
  publish: publishAgentVersion,
  listVersions: listAgentVersions,
  getVersion: getAgentVersion,
  deleteVersion: deleteAgentVersion,
  diff: diffAgentVersions,
  putAlias: putAgentAlias,
  listAliases: listAgentAliases,
  getAlias: getAgentAlias,
  deleteAlias: deleteAgentAlias,
};
