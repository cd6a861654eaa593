import { z } from '@hono/zod-openapi';
import { NotFoundError } from '../errors';
import { aliasShown, cachedReleases, DRAFT, diffOf, MAX_VERSIONS, presentAlias, routingOf, versionForSession, type aliasInput } from '../releases';
import type { Runtime } from '../runtime';
import type { TenantScope } from '../tenancy';
import { parseInput } from '../validation';
import { storedWorkflow, type StoredWorkflow } from './workflow-records';
import { workflow, workflowInput } from './workflow-schema';
import { presentWorkflow, workflows } from './workflows';

/**
 * A workflow's releases, as an agent's: the draft (the workflow as PUT leaves it) published as
 * immutable numbered versions, and aliases that route executions to versions by weight. An
 * execution names a version, an alias or neither (the draft), and records which ran.
 */

const releases = (rt: Runtime) => cachedReleases(rt, 'WORKFLOW', storedWorkflow, 'workflow');

export const workflowVersionShown = z
  .object({ workflowId: z.string(), version: z.int(), description: z.string(), createdAt: z.string(), workflow })
  .openapi('WorkflowVersion');

export const workflowAliasShown = aliasShown.extend({ workflowId: z.string() }).openapi('WorkflowAlias');

/** Which definition an execution ran: a version number, or the draft. */
export type WorkflowVersionRef = number | typeof DRAFT;

const presentVersion = (workflowId: string, v: { version: number; description: string; createdAt: string; snapshot: StoredWorkflow }) => ({
  workflowId,
  version: v.version,
  description: v.description,
  createdAt: v.createdAt,
  workflow: presentWorkflow(v.snapshot),
});

/** Snapshots the draft as the next version; the draft must validate as a PUT would now. */
export async function publishWorkflowVersion(rt: Runtime, scope: TenantScope, workflowId: string, description: string) {
  const draft = await workflows.get(rt, scope, workflowId);
  const { id: _i, createdAt: _c, updatedAt: _u, version: _v, ...fields } = presentWorkflow(draft);
  parseInput(workflowInput, fields);
  return presentVersion(workflowId, await releases(rt).store.publish(scope, workflowId, draft, description, MAX_VERSIONS));
}

export async function listWorkflowVersions(rt: Runtime, scope: TenantScope, workflowId: string, page: { limit: number; cursor?: string }) {
  await workflows.get(rt, scope, workflowId);
  const listed = await releases(rt).store.listVersions(scope, workflowId, page);
  return { items: listed.items.map((v) => presentVersion(workflowId, v)), nextCursor: listed.nextCursor };
}

export async function getWorkflowVersion(rt: Runtime, scope: TenantScope, workflowId: string, version: number) {
  await workflows.get(rt, scope, workflowId);
  return presentVersion(workflowId, await releases(rt).version(scope, workflowId, version));
}

export async function deleteWorkflowVersion(rt: Runtime, scope: TenantScope, workflowId: string, version: number) {
  await workflows.get(rt, scope, workflowId);
  await releases(rt).store.removeVersion(scope, workflowId, version);
  releases(rt).forget(scope, workflowId, { version });
  return { workflowId, version, deleted: true as const };
}

const definitionOf = async (rt: Runtime, scope: TenantScope, workflowId: string, ref: WorkflowVersionRef) =>
  ref === DRAFT ? workflows.get(rt, scope, workflowId) : (await releases(rt).version(scope, workflowId, ref)).snapshot;

export async function diffWorkflowVersions(rt: Runtime, scope: TenantScope, workflowId: string, from: WorkflowVersionRef, to: WorkflowVersionRef) {
  const [a, b] = await Promise.all([definitionOf(rt, scope, workflowId, from), definitionOf(rt, scope, workflowId, to)]);
  return { from, to, changes: diffOf(a, b) };
}

export async function putWorkflowAlias(rt: Runtime, scope: TenantScope, workflowId: string, name: string, input: z.infer<typeof aliasInput>) {
  await workflows.get(rt, scope, workflowId);
  const alias = await releases(rt).store.putAlias(scope, workflowId, name, routingOf(input));
  releases(rt).forget(scope, workflowId, { alias: name });
  return { workflowId, ...presentAlias(alias) };
}

export async function listWorkflowAliases(rt: Runtime, scope: TenantScope, workflowId: string) {
  await workflows.get(rt, scope, workflowId);
  return (await releases(rt).store.listAliases(scope, workflowId)).map((a) => ({ workflowId, ...presentAlias(a) }));
}

export async function getWorkflowAlias(rt: Runtime, scope: TenantScope, workflowId: string, name: string) {
  await workflows.get(rt, scope, workflowId);
  return { workflowId, ...presentAlias(await releases(rt).alias(scope, workflowId, name)) };
}

export async function deleteWorkflowAlias(rt: Runtime, scope: TenantScope, workflowId: string, name: string) {
  await workflows.get(rt, scope, workflowId);
  const existed = await releases(rt).store.removeAlias(scope, workflowId, name);
  releases(rt).forget(scope, workflowId, { alias: name });
  if (!existed) throw new NotFoundError('workflow alias', `${workflowId}:${name}`);
  return { workflowId, name, deleted: true as const };
}

/** What an execution asks to run: a version, an alias, or neither (the draft). */
export interface WorkflowTarget {
  version?: number;
  alias?: string;
}

/** The definition an execution runs, and which it is; under an alias, placed by weight from `key` (the execution's id). */
export async function workflowForRun(rt: Runtime, scope: TenantScope, workflowId: string, target: WorkflowTarget, key: string): Promise<{ workflow: StoredWorkflow; workflowVersion: WorkflowVersionRef }> {
  if (target.version !== undefined) return { workflow: (await releases(rt).version(scope, workflowId, target.version)).snapshot, workflowVersion: target.version };
  if (target.alias === undefined || target.alias === DRAFT) return { workflow: await workflows.get(rt, scope, workflowId), workflowVersion: DRAFT };
  const alias = await releases(rt).alias(scope, workflowId, target.alias);
  const version = versionForSession(alias.routing, key);
  return { workflow: (await releases(rt).version(scope, workflowId, version)).snapshot, workflowVersion: version };
}

/** A workflow's releases as the release routes serve them. */
export const workflowReleases = {
  idParam: 'workflowId',
  noun: 'workflow',
  tag: 'Workflow releases',
  versionShown: workflowVersionShown,
  aliasShown: workflowAliasShown,
  publish: publishWorkflowVersion,
  listVersions: listWorkflowVersions,
  getVersion: getWorkflowVersion,
  deleteVersion: deleteWorkflowVersion,
  diff: diffWorkflowVersions,
  putAlias: putWorkflowAlias,
  listAliases: listWorkflowAliases,
  getAlias: getWorkflowAlias,
  deleteAlias: deleteWorkflowAlias,
};
