import { z } from '@hono/zod-openapi';
import { ConflictError, NotFoundError, ValidationError } from '../errors';
import type { Runtime } from '../runtime';
import type { AwaitedRun, ExecutionRecord, HumanRequest } from '../store/executions';
import type { TenantScope } from '../tenancy';
import { getExecution } from './executions';
import { checkBackSeconds } from '../queue/work-lease';
import { afterSettle, sendSteps } from './progress';
import type { DefinedStep } from './step-run';
import { stepKind } from './steps';

/**
 * A step that pauses (a `human` step): it waits with a request, a person completes it through the
 * API (once), or its time runs out. A paused execution holds no lease and no worker: it is only a
 * record, so it survives restarts; the timeout is a delayed message that comes back every 15
 * minutes (SQS's longest delay) until the time is up.
 */

/** The step's attempt turns into a request for a person; the execution waits once nothing else runs. */
export async function pauseStep(rt: Runtime, scope: TenantScope, execution: ExecutionRecord, step: DefinedStep, attempt: number, request: HumanRequest): Promise<void> {
  const now = rt.clock.now();
  const paused = await rt.store.executions.pauseStep(scope, execution, step.id, attempt, { request });
  if (!paused) return;
  if (request.expiresAt) await sendSteps(rt, scope, execution, [step.id], checkBackSeconds(request.expiresAt, now));
  await afterSettle(rt, scope, paused);
}

/**
 * The step's attempt waits for a background run (an agent step's), holding no worker and no
 * message: the run's end sends the step's message (and the sweeper sends it again should that be
 * lost).
 */
export async function awaitRun(rt: Runtime, scope: TenantScope, execution: ExecutionRecord, step: DefinedStep, attempt: number, run: AwaitedRun): Promise<void> {
  const waiting = await rt.store.executions.pauseStep(scope, execution, step.id, attempt, { run });
  if (!waiting) return;
  // The run may have ended before the step was marked waiting: its message then found the step running.
  await checkRunStep(rt, scope, waiting, step.id);
}

/** A step waiting for a run settles once the run has ended: its reply is the output, its failure the step's. */
async function checkRunStep(rt: Runtime, scope: TenantScope, execution: ExecutionRecord, stepId: string): Promise<void> {
  const state = execution.steps[stepId]!;
  if (!state.run || !rt.agentRuns) return;
  const run = await rt.agentRuns.state(rt, scope, state.run.agentId, state.run.runId);
  if (!run.ended) return;
  const result =
    'result' in run
      ? { status: 'succeeded' as const, output: { ...run.result, reply: run.result.reply.slice(0, 20_000), toolCalls: run.result.toolCalls ?? [] } }
      : { status: 'failed' as const, error: { code: run.error.code, message: `run ${state.run.runId} ${run.status}: ${run.error.message}` } };
  const resolved = await rt.store.executions.resolveWaitingStep(scope, execution, stepId, { ...result, completedBy: 'run', startedAt: state.startedAt! });
  if (resolved) await afterSettle(rt, scope, resolved);
}

/** A message for a waiting step: its run ended, its time is up (the timeout applies), or not yet (it comes back). */
export async function checkWaitingStep(rt: Runtime, scope: TenantScope, execution: ExecutionRecord, stepId: string): Promise<void> {
  const state = execution.steps[stepId]!;
  if (state.run) return checkRunStep(rt, scope, execution, stepId);
  const expiresAt = state.request?.expiresAt;
  if (expiresAt === undefined) return;
  const now = rt.clock.now();
  if (expiresAt > now) {
    await sendSteps(rt, scope, execution, [stepId], checkBackSeconds(expiresAt, now));
    return;
  }
  const step = execution.definition.find((s) => s.id === stepId) as DefinedStep | undefined;
  const result = step && stepKind(step.type)?.pauses?.timedOut(step.config);
  if (!result) return;
  const resolved = await rt.store.executions.resolveWaitingStep(scope, execution, stepId, { ...result, completedBy: 'timeout', startedAt: state.startedAt! });
  if (resolved) await afterSettle(rt, scope, resolved);
}

/**
 * A person completes a waiting step with `input`, checked against the step's schema: the input is
 * its output and the execution goes on. Once: a second completion is a 409.
 */
export async function completeHumanStep(rt: Runtime, scope: TenantScope, workflowId: string, executionId: string, stepId: string, input: unknown): Promise<ExecutionRecord> {
  const execution = await getExecution(rt, scope, workflowId, executionId);
  const state = execution.steps[stepId];
  if (!state) throw new NotFoundError('step', stepId);
  if (!stepKind(state.type)?.pauses) throw new ConflictError(`Step ${stepId} is a ${state.type} step: only human steps are completed through the API`, { type: state.type });
  if (state.status !== 'waiting') {
    throw new ConflictError(state.completedBy ? `Step ${stepId} was already completed (${state.completedBy === 'timeout' ? 'its time ran out' : 'through the API'})` : `Step ${stepId} is ${state.status}, not waiting for input`, { status: state.status });
  }
  const checked = z.fromJSONSchema(state.request!.schema).safeParse(input);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    throw new ValidationError(['input', ...issue.path].join('.'), issue.message, { issues: checked.error.issues.slice(0, 20).map((i) => ({ field: ['input', ...i.path].join('.'), reason: i.message })) });
  }
  // On the sweeper's list again before it runs again: a crash after this leaves it re-driven, not lost.
  await rt.store.unfinishedWork.put({ kind: 'execution', tenantId: scope.tenantId, id: executionId, workflowId, seenAt: rt.clock.now(), redrives: 0 });
  const resolved = await rt.store.executions.resolveWaitingStep(scope, execution, stepId, { status: 'succeeded', output: checked.data ?? null, completedBy: 'api', startedAt: state.startedAt! });
  if (!resolved) {
    const now = await rt.store.executions.getExecution(scope, workflowId, executionId);
    throw new ConflictError(`Step ${stepId} was already completed, or the execution ended`, { status: now?.steps[stepId]?.status, executionStatus: now?.status });
  }
  await rt.store.executions.removeWaiting(scope, executionId);
  await afterSettle(rt, scope, resolved);
  return (await rt.store.executions.getExecution(scope, workflowId, executionId)) ?? resolved;
}

/** The tenant's executions waiting for a person, newest first; pointers whose execution moved on are dropped. */
export async function listWaitingExecutions(rt: Runtime, scope: TenantScope, page: { limit: number; cursor?: string }) {
  const pointers = await rt.store.executions.listWaiting(scope, page);
  const found = await Promise.all(
    pointers.items.map(async (p) => {
      const execution = await rt.store.executions.getExecution(scope, p.workflowId, p.executionId);
      if (execution?.status === 'waiting') return execution;
      await rt.store.executions.removeWaiting(scope, p.executionId);
      return undefined;
    }),
  );
  return { items: found.filter((e): e is ExecutionRecord => e !== undefined), nextCursor: pointers.nextCursor };
}
