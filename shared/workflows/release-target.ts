import type { DRAFT, ReleaseTarget } from '../releases';
import { resolverOf } from '../releases';
import type { Runtime } from '../runtime';
import type { TenantScope } from '../tenancy';
import { storedWorkflow, workflows, type StoredWorkflow } from './workflow-records';

/**
 * Which definition an execution runs: light on purpose (the records and the release store only),
 * since whatever starts an execution — an agent's workflow tool too — carries it.
 */

/** Which definition an execution ran: a version number, or the draft. */
export type WorkflowVersionRef = number | typeof DRAFT;

/** What an execution asks to run: a version, an alias, or neither (the draft). */
export type WorkflowTarget = ReleaseTarget;

const resolve = resolverOf({ kind: 'WORKFLOW', shape: storedWorkflow, label: 'workflow', draft: (rt, scope, id) => workflows.get(rt, scope, id), runDraft: (rt, scope, id) => workflows.getRecent(rt, scope, id) });

/** The definition an execution runs, and which it is; under an alias, placed by weight from `key` (the execution's id). */
export async function workflowForRun(rt: Runtime, scope: TenantScope, workflowId: string, target: WorkflowTarget, key: string): Promise<{ workflow: StoredWorkflow; workflowVersion: WorkflowVersionRef }> {
  const { definition, version } = await resolve(rt, scope, workflowId, target, key);
  return { workflow: definition, workflowVersion: version };
}
