import { config } from '../config';
import { AppError, ConflictError, isRetryable, NotFoundError } from '../errors';
import { isId, newId } from '../ids';
import { errorFields, log } from '../log';
import type { StepMessage } from '../queue/messages';
import type { Delivery } from '../queue/queue';
import type { ExecutionRecord, ExecutionStatus, StepState } from '../store/executions';
import { scopeOf, type TenantScope } from '../tenancy';
import { stepKind } from './steps';
import type { StepResult } from './steps/step-kind';
import { checkBackSeconds, whileLeased } from './work-lease';
import { compileWorkflow } from './workflow-compiler';
import { workflows } from './workflows';
import { recordUsage } from './usage';
import { meteringSearches, type SearchWork } from '../search/search-meter';
import { inSpan, SpanKind } from '../telemetry';
import type { Runtime } from '../runtime';

/**
 * Executing a workflow: the execution record pins the definition; ready steps go to the
 * workflow-steps queue; the worker claims a step (conditional write), runs it, settles it
 * (conditional on its attempt) and sends the steps that became ready. Duplicate messages find the
 * step taken or done and change nothing; a worker that dies mid-step loses its lease and the
 * redelivered message runs the step again.
 */
export const MAX_STEP_ATTEMPTS = 3;

type Definition = ExecutionRecord['definition'];
const TERMINAL = new Set(['succeeded', 'failed', 'skipped']);

/** Steps whose dependencies are all settled and that have not started. */
function readySteps(definition: Definition, steps: Record<string, StepState>): string[] {
  return definition
    .filter((s) => steps[s.id]?.status === 'pending' && s.dependsOn.every((d) => TERMINAL.has(steps[d]?.status ?? '')))
    .map((s) => s.id);
}

async function send(rt: Runtime, scope: TenantScope, execution: ExecutionRecord, stepIds: string[], delaySeconds?: number) {
  if (stepIds.length === 0) return;
  await rt.queues.workflowSteps.send(
    stepIds.map((stepId) => ({ type: 'step', tenantId: scope.tenantId, workflowId: execution.workflowId, executionId: execution.id, stepId })),
    { delaySeconds },
  );
}

export async function startExecution(
  rt: Runtime,
  scope: TenantScope,
  workflowId: string,
  request: { input: string; parameters: Record<string, unknown>; keyId?: string },
): Promise<ExecutionRecord> {
  const workflow = await workflows.get(rt, scope, workflowId);
  const { plan } = compileWorkflow(workflow.steps);
  const definition = workflow.steps.map((s) => ({ ...s, dependsOn: plan.steps.find((p) => p.id === s.id)!.dependsOn })) as Definition;
  const now = new Date().toISOString();
  const execution: ExecutionRecord = {
    id: newId('execution'),
    workflowId,
    workflowVersion: workflow.version,
    status: 'running',
    input: request.input,
    parameters: request.parameters,
    steps: Object.fromEntries(definition.map((s) => [s.id, { id: s.id, type: s.type, status: 'pending', attempt: 0 } satisfies StepState])),
    definition,
    usage: { inputTokens: 0, outputTokens: 0 },
    ...(request.keyId ? { keyId: request.keyId } : {}),
    createdAt: now,
    startedAt: now,
  };
  // Registered first, so that no running execution can escape the sweeper (work-sweeper.ts).
  await rt.store.unfinishedWork.put({ kind: 'execution', tenantId: scope.tenantId, id: execution.id, workflowId, seenAt: rt.clock.now(), redrives: 0 });
  await rt.store.executions.createExecution(scope, execution);
  const ready = readySteps(definition, execution.steps);
  await send(rt, scope, execution, ready);
  await rt.store.executions.markQueued(scope, execution, ready);
  return execution;
}

/** The outputs a step may read: every settled step's, and the latest classification and search. */
function templateScope(execution: ExecutionRecord, stepIndex: number) {
  const outputs: Record<string, unknown> = {};
  let category: string | undefined;
  let context: string | undefined;
  let passages: Array<{ title: string; text: string }> | undefined;
  for (const step of execution.definition.slice(0, stepIndex)) {
    const state = execution.steps[step.id];
    if (state?.status !== 'succeeded') continue;
    outputs[step.id] = state.output;
    const output = state.output as Record<string, unknown>;
    if (step.type === 'classification') category = String(output.category);
    if (step.type === 'search') {
      context = String(output.context);
      passages = (output.results as Array<{ title: string; text: string }>).map((r) => ({ title: r.title, text: r.text }));
    }
  }
  return { scope: { input: execution.input, parameters: execution.parameters, outputs, category, context }, passages };
}

async function runStep(rt: Runtime, scope: TenantScope, execution: ExecutionRecord, step: Definition[number]): Promise<StepResult> {
  const kind = stepKind(step.type);
  if (!kind) throw new AppError('INTERNAL_ERROR', `step ${step.id} has an unknown type ${step.type}`);
  const index = execution.definition.findIndex((s) => s.id === step.id);
  const { scope: vars, passages } = templateScope(execution, index);
  return kind.run(step.config as Record<string, unknown>, { rt, scope, vars, passages, deadline: AbortSignal.timeout(config.modelTimeoutMs) });
}

/** Moves a running execution to its final state and takes it off the sweeper's list. */
export async function finishExecution(rt: Runtime, scope: TenantScope, execution: ExecutionRecord, result: Parameters<Runtime['store']['executions']['finishExecution']>[2]) {
  await rt.store.executions.finishExecution(scope, execution, result);
  await rt.store.unfinishedWork.remove({ kind: 'execution', tenantId: scope.tenantId, id: execution.id });
}

async function afterSettle(rt: Runtime, scope: TenantScope, execution: ExecutionRecord) {
  const states = Object.values(execution.steps);
  const failed = states.find((s) => s.status === 'failed');
  if (failed) {
    await finishExecution(rt, scope, execution, { status: 'failed', error: { code: failed.error?.code ?? 'INTERNAL_ERROR', message: `step ${failed.id} failed: ${failed.error?.message ?? ''}` } });
    return;
  }
  if (states.every((s) => TERMINAL.has(s.status))) {
    const last = [...execution.definition].reverse().find((s) => execution.steps[s.id]?.status === 'succeeded');
    await finishExecution(rt, scope, execution, { status: 'succeeded', output: last ? execution.steps[last.id]!.output : null });
    return;
  }
  const ready = readySteps(execution.definition, execution.steps);
  await send(rt, scope, execution, ready);
  await rt.store.executions.markQueued(scope, execution, ready);
}

export async function handleStepMessage(rt: Runtime, message: StepMessage, delivery: Delivery): Promise<void> {
  const scope = scopeOf(message.tenantId);
  const current = await rt.store.executions.getExecution(scope, message.workflowId, message.executionId);
  if (!current || current.status !== 'running') return; // gone, canceled or finished
  const state = current.steps[message.stepId];
  if (!state) return;
  if (TERMINAL.has(state.status)) {
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
      await send(rt, scope, current, [message.stepId], checkBackSeconds(state.leaseUntil, now));
    }
    return;
  }
  const step = claimed.definition.find((s) => s.id === message.stepId)!;
  const attempt = claimed.steps[message.stepId]!.attempt;
  const startedAt = claimed.steps[message.stepId]!.startedAt!;

  // A branch whose condition is not met is skipped, and so is a step that depends on skipped ones only.
  const when = step.when as { step: string; category: string } | undefined;
  const chosen = when ? (claimed.steps[when.step]?.output as { category?: string } | undefined)?.category : undefined;
  const dependsOnSkipped = step.dependsOn.length > 0 && step.dependsOn.every((d) => claimed.steps[d]?.status === 'skipped');
  if ((when && chosen !== when.category) || dependsOnSkipped) {
    const settled = await rt.store.executions.settleStep(scope, claimed, step.id, attempt, { status: 'skipped', startedAt });
    if (settled) await afterSettle(rt, scope, settled);
    return;
  }

  // Only the step's own work counts as its failure; a store error while settling fails the message
  // instead, and SQS redelivers it (the lease then lets the step run again).
  let outcome: StepResult | { error: unknown };
  const searched: SearchWork = { searches: 0, readUnits: 0 };
  try {
    outcome = await whileLeased(
      () => rt.store.executions.renewStepLease(scope, claimed, step.id, attempt, config.workLeaseMs),
      () => meteringSearches(searched, () => runStep(rt, scope, claimed, step)),
    );
  } catch (error) {
    outcome = { error };
  }
  if (!('error' in outcome)) {
    const settled = await rt.store.executions.settleStep(scope, claimed, step.id, attempt, { status: 'succeeded', output: outcome.output, usage: outcome.usage, startedAt });
    if (!settled) return;
    // Counted once: only the delivery that settled the step gets here.
    const model = outcome.usage && outcome.model ? { model: outcome.model, ...outcome.usage, requests: 1 } : {};
    await recordUsage(rt, scope, { keyId: claimed.keyId, subject: { kind: 'workflow', id: claimed.workflowId }, steps: 1, ...searched, ...model });
    await afterSettle(rt, scope, settled);
    return;
  }
  const { error } = outcome;
  const appError = error instanceof AppError ? error : new AppError('INTERNAL_ERROR', 'The step failed');
  log.warn('workflow step failed', { executionId: claimed.id, stepId: step.id, attempt, ...errorFields(error) });
  if (isRetryable(error) && attempt < MAX_STEP_ATTEMPTS && delivery.receiveCount < delivery.maxReceives) {
    const settled = await rt.store.executions.settleStep(scope, claimed, step.id, attempt, { status: 'retrying', error: { code: appError.code, message: appError.message }, startedAt });
    if (settled) await send(rt, scope, settled, [step.id], 2 ** attempt); // backoff: 2 s, 4 s, …
    return;
  }
  const settled = await rt.store.executions.settleStep(scope, claimed, step.id, attempt, { status: 'failed', error: { code: appError.code, message: appError.message }, startedAt });
  if (settled) await afterSettle(rt, scope, settled);
}

/**
 * Sends again what an execution waits on (the sweeper, when its messages were lost): the steps
 * queued, retrying, ready or running on a lease that ran out. Duplicates find the step taken.
 */
export async function redriveExecution(rt: Runtime, scope: TenantScope, execution: ExecutionRecord): Promise<string[]> {
  const now = rt.clock.now();
  const ready = readySteps(execution.definition, execution.steps);
  const stalled = Object.values(execution.steps)
    .filter((s) => s.status === 'queued' || s.status === 'retrying' || (s.status === 'running' && (s.leaseUntil ?? 0) <= now))
    .map((s) => s.id);
  await send(rt, scope, execution, [...stalled, ...ready]);
  await rt.store.executions.markQueued(scope, execution, ready);
  return [...stalled, ...ready];
}

/** Poison or repeatedly failing messages: the execution must not stay running. */
export async function failExecutionOf(rt: Runtime, message: StepMessage, reason: string): Promise<void> {
  const scope = scopeOf(message.tenantId);
  const execution = await rt.store.executions.getExecution(scope, message.workflowId, message.executionId);
  if (execution?.status === 'running') await finishExecution(rt, scope, execution, { status: 'failed', error: { code: 'INTERNAL_ERROR', message: reason } });
}

/** The worker's consumer: on the last allowed delivery a failing message fails its execution. */
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

const FINISHED = new Set(['succeeded', 'failed', 'canceled']);

/**
 * Starts an execution and waits up to `waitMs` for it to finish; `finished` says whether it did
 * (else the caller answers 202 and the client polls).
 */
export async function executeAndWait(
  rt: Runtime,
  scope: TenantScope,
  workflowId: string,
  request: { input: string; parameters: Record<string, unknown>; keyId?: string },
  waitMs: number,
): Promise<{ execution: ExecutionRecord; finished: boolean }> {
  let execution = await startExecution(rt, scope, workflowId, request);
  const deadline = rt.clock.now() + waitMs;
  while (!FINISHED.has(execution.status) && rt.clock.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    execution = (await rt.store.executions.getExecution(scope, workflowId, execution.id)) ?? execution;
  }
  return { execution, finished: FINISHED.has(execution.status) };
}

/** An execution of the tenant's workflow, or a 404. */
export async function getExecution(rt: Runtime, scope: TenantScope, workflowId: string, executionId: string): Promise<ExecutionRecord> {
  const record = isId('execution', executionId) ? await rt.store.executions.getExecution(scope, workflowId, executionId) : undefined;
  if (!record) throw new NotFoundError('execution', executionId);
  return record;
}

/** A workflow's executions, newest first (the workflow must exist). */
export async function listExecutions(rt: Runtime, scope: TenantScope, workflowId: string, page: { limit: number; cursor?: string; status?: ExecutionStatus }) {
  await workflows.get(rt, scope, workflowId);
  return rt.store.executions.listExecutions(scope, workflowId, page);
}

/** Cancels a running execution; one that already finished is a 409. */
export async function cancelExecution(rt: Runtime, scope: TenantScope, workflowId: string, executionId: string): Promise<ExecutionRecord> {
  const current = await getExecution(rt, scope, workflowId, executionId);
  const canceled = await rt.store.executions.cancelExecution(scope, current);
  await rt.store.unfinishedWork.remove({ kind: 'execution', tenantId: scope.tenantId, id: executionId });
  if (!canceled) throw new ConflictError(`Execution ${executionId} is already ${current.status}`, { status: current.status });
  return canceled;
}

/** An execution as the API shows it: steps in definition order, no internal lease fields. */
export function presentExecution(execution: ExecutionRecord) {
  const { definition, steps, keyId: _keyId, ...rest } = execution;
  return {
    ...rest,
    steps: definition.map((s) => {
      const { leaseUntil: _lease, ...state } = steps[s.id]!;
      return state;
    }),
  };
}
