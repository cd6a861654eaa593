import type { Runtime } from '../runtime';
import type { ExecutionRecord, StepState } from '../store/executions';
import type { TenantScope } from '../tenancy';
import { stepKind } from './steps';
import { notifyWebhook } from './webhooks';
import type { Definition } from './step-run';

/**
 * What follows a step's settling: the execution finishes, the steps that became ready are sent,
 * or — nothing running and a person awaited — it waits. Shared by steps, map items and people.
 */
export const SETTLED = new Set(['succeeded', 'failed', 'skipped']);
const ACTIVE = new Set(['queued', 'running', 'retrying']);

/** The steps each step waits for: its `dependsOn`, else the step before it. */
export function dependenciesOf(steps: Array<{ id: string; dependsOn?: string[] }>): string[][] {
  return steps.map((s, i) => s.dependsOn ?? (i === 0 ? [] : [steps[i - 1]!.id]));
}

/** Steps whose dependencies are all settled and that have not started. */
export function readySteps(definition: Definition, steps: Record<string, StepState>): string[] {
  return definition.filter((s) => steps[s.id]?.status === 'pending' && s.dependsOn.every((d) => SETTLED.has(steps[d]?.status ?? ''))).map((s) => s.id);
}

export async function sendSteps(rt: Runtime, scope: TenantScope, execution: Pick<ExecutionRecord, 'id' | 'workflowId'>, stepIds: string[], delaySeconds?: number) {
  if (stepIds.length === 0) return;
  await rt.queues.workflowSteps.send(
    stepIds.map((stepId) => ({ type: 'step', tenantId: scope.tenantId, workflowId: execution.workflowId, executionId: execution.id, stepId })),
    { delaySeconds },
  );
}

/** Sends the items of a map step at these positions. */
export async function sendItems(rt: Runtime, scope: TenantScope, execution: Pick<ExecutionRecord, 'id' | 'workflowId'>, stepId: string, indexes: number[], delaySeconds?: number) {
  if (indexes.length === 0) return;
  await rt.queues.workflowSteps.send(
    indexes.map((item) => ({ type: 'step', tenantId: scope.tenantId, workflowId: execution.workflowId, executionId: execution.id, stepId, item })),
    { delaySeconds },
  );
}

/** Moves an execution to its final state, takes it off the sweeper's list and the waiting list. */
export async function finishExecution(rt: Runtime, scope: TenantScope, execution: ExecutionRecord, result: Parameters<Runtime['store']['executions']['finishExecution']>[2]) {
  const finished = await rt.store.executions.finishExecution(scope, execution, result);
  await rt.store.unfinishedWork.remove({ kind: 'execution', tenantId: scope.tenantId, id: execution.id });
  // Only an execution with a person's step can have waited (and be listed as waiting).
  if (Object.values(execution.steps).some((s) => stepKind(s.type)?.pauses)) await rt.store.executions.removeWaiting(scope, execution.id);
  // Only the call that finished it notifies.
  if (finished) await notifyWebhook(rt, scope, finished, result.status);
}

export async function afterSettle(rt: Runtime, scope: TenantScope, execution: ExecutionRecord): Promise<void> {
  const states = Object.values(execution.steps);
  const failed = states.find((s) => s.status === 'failed');
  if (failed) {
    await finishExecution(rt, scope, execution, { status: 'failed', error: { code: failed.error?.code ?? 'INTERNAL_ERROR', message: `step ${failed.id} failed: ${failed.error?.message ?? ''}` } });
    return;
  }
  if (states.every((s) => SETTLED.has(s.status))) {
    const last = [...execution.definition].reverse().find((s) => execution.steps[s.id]?.status === 'succeeded');
    await finishExecution(rt, scope, execution, { status: 'succeeded', output: last ? execution.steps[last.id]!.output : null });
    return;
  }
  const ready = readySteps(execution.definition, execution.steps);
  if (ready.length > 0) {
    await sendSteps(rt, scope, execution, ready);
    await rt.store.executions.markQueued(scope, execution, ready);
    return;
  }
  // A step waiting for a background run is work in progress; one waiting for a person makes the execution wait.
  const working = states.some((s) => ACTIVE.has(s.status) || (s.status === 'waiting' && s.run));
  const forPerson = states.filter((s) => s.status === 'waiting' && !s.run);
  if (execution.status === 'running' && !working && forPerson.length > 0) {
    // The pointer first: a listing drops pointers whose execution is not waiting, never misses one that is.
    await rt.store.executions.putWaiting(scope, execution);
    const waiting = await rt.store.executions.markWaiting(scope, execution, execution.steps);
    // One delivery per wait: keyed by the steps it waits on.
    const steps = forPerson.map((s) => s.id);
    if (waiting) await notifyWebhook(rt, scope, waiting, 'waiting', `waiting.${steps.join('.')}`);
  }
}
