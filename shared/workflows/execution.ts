import { config } from '../config';
import { errorFields, log } from '../log';
import type { StepMessage, WorkflowMessage } from '../queue/messages';
import type { Delivery } from '../queue/queue';
import type { ExecutionRecord } from '../store/executions';
import { scopeOf, type TenantScope } from '../tenancy';
import { startScheduled } from './schedules';
import { stepKind } from './steps';
import { modelUsageOf, type StepResult } from './steps/step-kind';
import { checkBackSeconds, whileLeased } from '../queue/work-lease';
import { awaitRun, checkWaitingStep, pauseStep } from './human';
import { CodeError } from './steps/code';
import { handleItem, redriveItems, startFanOut } from './fan-out';
import { afterSettle, finishExecution, readySteps, sendSteps, SETTLED } from './progress';
import { failedAttempt, runScopeOf, runStep, type DefinedStep, type RunScope } from './step-run';
import { recordUsage } from '../usage';
import { meteringSearches, type SearchWork } from '../search/search-meter';
import { inSpan, SpanKind } from '../telemetry';
import type { Runtime, RuntimeWith } from '../runtime';

/**
 * Executing a workflow: the execution record pins the definition; ready steps go to the
 * workflow-steps queue; the worker claims a step (conditional write), runs it, settles it
 * (conditional on its attempt) and sends the steps that became ready. Duplicate messages find the
 * step taken or done and change nothing; a worker that dies mid-step loses its lease and the
 * redelivered message runs the step again. A step is left out when a kind's `branches` (a
 * condition's) did not choose it. What a step gives is a result (it settles), a fan-out (its
 * items run as messages of their own: fan-out.ts) or a pause (a person is asked: human.ts).
 */

/** Whether a step is left out: its `when` category or its condition's branch was not chosen, or all it depends on was skipped. */
function isSkipped(execution: ExecutionRecord, step: DefinedStep): boolean {
  const when = step.when as { step: string; category: string } | undefined;
  if (when && (execution.steps[when.step]?.output as { category?: string } | undefined)?.category !== when.category) return true;
  for (const chooser of execution.definition as DefinedStep[]) {
    const branches = stepKind(chooser.type)?.branches;
    if (!branches) continue;
    const among = branches.among(chooser.config);
    if (!among.then.includes(step.id) && !among.else.includes(step.id)) continue;
    const state = execution.steps[chooser.id];
    // A step that did not run chose no branch: its steps are left out too.
    if (state?.status !== 'succeeded' || branches.leftOut(chooser.config, state.output).includes(step.id)) return true;
  }
  return step.dependsOn.length > 0 && step.dependsOn.every((d) => execution.steps[d]?.status === 'skipped');
}

/** What a claimed step gives: a result, or nothing yet (its items were sent, a person asked). */
async function runClaimed(rt: Runtime, scope: TenantScope, execution: ExecutionRecord, step: DefinedStep, attempt: number, run: RunScope): Promise<StepResult | undefined> {
  const outcome = await runStep(rt, scope, step, run, execution.keyId, { workflowId: execution.workflowId, executionId: execution.id, stepId: step.id });
  if ('pause' in outcome) await pauseStep(rt, scope, execution, step, attempt, outcome.pause);
  else if ('awaitRun' in outcome) await awaitRun(rt, scope, execution, step, attempt, outcome.awaitRun);
  else if ('fanOut' in outcome) await startFanOut(rt, scope, execution, step, attempt, outcome.fanOut);
  else return outcome;
  return undefined;
}

export async function handleStepMessage(rt: Runtime, message: StepMessage, delivery: Delivery): Promise<void> {
  const scope = scopeOf(message.tenantId);
  const current = await rt.store.executions.getExecution(scope, message.workflowId, message.executionId);
  if (!current || (current.status !== 'running' && current.status !== 'waiting')) return; // gone, canceled or finished
  const state = current.steps[message.stepId];
  if (!state) return;
  const step = current.definition.find((s) => s.id === message.stepId)! as DefinedStep;
  const index = current.definition.indexOf(step);
  if (message.item !== undefined) {
    await handleItem(rt, scope, current, step, message.item, runScopeOf(current, index), delivery);
    return;
  }
  if (state.status === 'waiting') {
    await checkWaitingStep(rt, scope, current, step.id);
    return;
  }
  if (current.status !== 'running') return;
  if (SETTLED.has(state.status)) {
    // A redelivery after the step settled: make sure what it unblocked was sent (a crash may
    // have come between settling and sending); duplicates of those messages are harmless.
    await afterSettle(rt, scope, current);
    return;
  }
  const claimed = await rt.store.executions.claimStep(scope, current, message.stepId, config.workLeaseMs);
  if (!claimed) {
    // Another delivery runs it. If that worker died, its lease runs out: look again just after.
    const now = rt.clock.now();
    if (state.status === 'running' && state.leaseUntil !== undefined && state.leaseUntil > now) {
      await sendSteps(rt, scope, current, [message.stepId], checkBackSeconds(state.leaseUntil, now));
    }
    return;
  }
  const attempt = claimed.steps[step.id]!.attempt;
  const startedAt = claimed.steps[step.id]!.startedAt!;

  if (isSkipped(claimed, step)) {
    const settled = await rt.store.executions.settleStep(scope, claimed, step.id, attempt, { status: 'skipped', startedAt });
    if (settled) await afterSettle(rt, scope, settled);
    return;
  }

  // Only the step's own work counts as its failure; a store error while settling fails the message
  // instead, and SQS redelivers it (the lease then lets the step run again).
  let outcome: StepResult | undefined | { error: unknown };
  const searched: SearchWork = { searches: 0, readUnits: 0 };
  try {
    outcome = await whileLeased(
      () => rt.store.executions.renewStepLease(scope, claimed, step.id, attempt, config.workLeaseMs),
      () => meteringSearches(searched, () => runClaimed(rt, scope, claimed, step, attempt, runScopeOf(claimed, index))),
    );
  } catch (error) {
    outcome = { error };
  }
  if (outcome === undefined) return; // fanned out or paused: its items or a person settle it
  if (!('error' in outcome)) {
    const settled = await rt.store.executions.settleStep(scope, claimed, step.id, attempt, { status: 'succeeded', output: outcome.output, usage: outcome.usage, logs: outcome.logs, startedAt });
    if (!settled) return;
    // Counted once: only the delivery that settled the step gets here.
    const [first, ...more] = modelUsageOf(outcome);
    const subject = { kind: 'workflow' as const, id: claimed.workflowId };
    const codeMs = outcome.codeMs !== undefined ? { codeMs: Math.ceil(outcome.codeMs) } : {};
    await Promise.all([recordUsage(rt, scope, { keyId: claimed.keyId, subject, steps: 1, ...searched, ...codeMs, ...first }), ...more.map((m) => recordUsage(rt, scope, { keyId: claimed.keyId, subject, ...m }))]);
    await afterSettle(rt, scope, settled);
    return;
  }
  log.warn('workflow step failed', { executionId: claimed.id, stepId: step.id, attempt, ...errorFields(outcome.error) });
  const failed = failedAttempt(outcome.error, attempt, step, delivery, 'The step failed');
  if (failed.retryInSeconds !== undefined) {
    const settled = await rt.store.executions.settleStep(scope, claimed, step.id, attempt, { status: 'retrying', error: failed.error, startedAt });
    if (settled) await sendSteps(rt, scope, settled, [step.id], failed.retryInSeconds);
    return;
  }
  // A code step's failure keeps what its code logged: the first thing to read when it failed.
  const code = outcome.error instanceof CodeError ? outcome.error : undefined;
  const settled = await rt.store.executions.settleStep(scope, claimed, step.id, attempt, { status: 'failed', error: failed.error, logs: code?.logs, startedAt });
  if (code && settled) await recordUsage(rt, scope, { keyId: claimed.keyId, subject: { kind: 'workflow', id: claimed.workflowId }, codeMs: Math.ceil(code.ms) });
  if (settled) await afterSettle(rt, scope, settled);
}

/**
 * Sends again what an execution waits on (the sweeper, when its messages were lost): the steps
 * queued, retrying, ready or running on a lease that ran out, and the lost items of running maps.
 * Duplicates find the step taken.
 */
export async function redriveExecution(rt: Runtime, scope: TenantScope, execution: ExecutionRecord): Promise<string[]> {
  const now = rt.clock.now();
  const ready = readySteps(execution.definition, execution.steps);
  const mapping = Object.values(execution.steps).filter((s) => s.status === 'running' && s.map);
  const stalled = Object.values(execution.steps)
    .filter((s) => s.status === 'queued' || s.status === 'retrying' || (s.status === 'running' && !s.map && (s.leaseUntil ?? 0) <= now))
    .map((s) => s.id);
  await sendSteps(rt, scope, execution, [...stalled, ...ready]);
  await rt.store.executions.markQueued(scope, execution, ready);
  for (const state of mapping) {
    const items = await redriveItems(rt, scope, execution, execution.definition.find((s) => s.id === state.id) as DefinedStep);
    if (items.length > 0) stalled.push(`${state.id}[${items.join(',')}]`);
  }
  return [...stalled, ...ready];
}

/** Poison or repeatedly failing messages: the execution must not stay running. */
export async function failExecutionOf(rt: Runtime, message: StepMessage, reason: string): Promise<void> {
  const scope = scopeOf(message.tenantId);
  const execution = await rt.store.executions.getExecution(scope, message.workflowId, message.executionId);
  if (execution?.status === 'running' || execution?.status === 'waiting') await finishExecution(rt, scope, execution, { status: 'failed', error: { code: 'INTERNAL_ERROR', message: reason } });
}

/** The steps queue's consumer: a step to run, or a schedule that is due. */
export function consumeWorkflowMessage(rt: RuntimeWith<'models' | 'queues' | 'secrets' | 'agentTurn'>, message: WorkflowMessage, delivery: Delivery): Promise<void> {
  return message.type === 'scheduled' ? startScheduled(rt, message) : consumeStepMessage(rt, message, delivery);
}

/** A step's consumer: on the last allowed delivery a failing message fails its execution. */
export function consumeStepMessage(rt: Runtime, message: StepMessage, delivery: Delivery): Promise<void> {
  // The queue runs this in the trace of the request (or step) that sent the message.
  return inSpan(`workflow.step ${message.stepId}`, { kind: SpanKind.CONSUMER, attributes: { 'cairn.tenant.id': message.tenantId, 'cairn.workflow.id': message.workflowId, 'cairn.execution.id': message.executionId, 'cairn.step.id': message.stepId, 'cairn.delivery': delivery.receiveCount } }, async () => {
    try {
      await handleStepMessage(rt, message, delivery);
    } catch (error) {
      if (delivery.receiveCount >= delivery.maxReceives) await failExecutionOf(rt, message, `step ${message.stepId} could not be processed`);
      throw error;
    }
  });
}

