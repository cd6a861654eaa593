import { ConflictError, NotFoundError, ValidationError } from '../errors';
import { isId, newId } from '../ids';
import type { Runtime } from '../runtime';
import { type ExecutionRecord, type ExecutionStatus, type StepState } from '../store/executions';
import type { TenantScope } from '../tenancy';
import { dependenciesOf, readySteps, sendSteps } from './progress';
import { notifyWebhook, presentDelivery, sealWebhook, showWebhook } from './webhooks';
import type { WebhookInput } from './webhook-schema';
import { workflows } from './workflow-records';
import { workflowForRun, type WorkflowTarget } from './release-target';
import type { Definition } from './step-run';
import { isoNow } from '../clock';
import { admittedUser, type EndUser } from '../identity';
import { log } from '../log';

/**
 * Executions as the API and agents' workflow tools see them: started, waited for, read, listed,
 * canceled. Running their steps is execution.ts's, so these functions do not carry the
 * steps' code.
 */
export async function startExecution(
  rt: Runtime,
  scope: TenantScope,
  workflowId: string,
  request: ExecuteRequest,
): Promise<ExecutionRecord> {
  const id = newId('execution', rt.clock.now());
  const { workflow, workflowVersion } = await workflowForRun(rt, scope, workflowId, request.target ?? {}, id);
  // The request's webhook over the workflow's, pinned like the definition.
  const webhook = request.webhook ? await sealWebhook(rt, scope, request.webhook, undefined, 'webhook') : workflow.webhook;
  // Whoever started it, the execution acts only for an end user the tenant admits (else for nobody).
  const { user, refused } = await admittedUser(rt, scope, request.user);
  if (refused) log.warn('execution runs for nobody', { tenantId: scope.tenantId, workflowId, executionId: id, reason: refused });
  return launch(rt, scope, { id, workflowId, workflowVersion, definition: definitionOf(workflow.steps), input: request.input, parameters: request.parameters, keyId: request.keyId, webhook, user });
}

/** Steps with their dependencies spelled out, as an execution keeps them. */
const definitionOf = (steps: Array<{ id: string; type: string; dependsOn?: string[] }>): Definition => {
  const deps = dependenciesOf(steps);
  return steps.map((s, i) => ({ ...s, dependsOn: deps[i]! }));
};

/** Writes a new execution (its steps pending but those given) and sends the steps that are ready. */
async function launch(
  rt: Runtime,
  scope: TenantScope,
  start: Pick<ExecutionRecord, 'id' | 'workflowId' | 'workflowVersion' | 'definition' | 'input' | 'parameters' | 'keyId' | 'webhook' | 'rerunOf' | 'user'> & { reused?: Record<string, StepState> },
): Promise<ExecutionRecord> {
  const { reused = {}, keyId, webhook, rerunOf, user, ...fields } = start;
  const now = isoNow(rt.clock);
  const execution: ExecutionRecord = {
    ...fields,
    status: 'running',
    steps: Object.fromEntries(fields.definition.map((s) => [s.id, reused[s.id] ?? ({ id: s.id, type: s.type, status: 'pending', attempt: 0 } satisfies StepState)])),
    usage: { inputTokens: 0, outputTokens: 0 },
    ...(keyId ? { keyId } : {}),
    ...(user ? { user } : {}),
    ...(webhook ? { webhook } : {}),
    ...(rerunOf ? { rerunOf } : {}),
    createdAt: now,
    startedAt: now,
  };
  // Registered first, so that no running execution can escape the sweeper (work-sweeper.ts).
  await rt.store.unfinishedWork.put({ kind: 'execution', tenantId: scope.tenantId, id: execution.id, workflowId: execution.workflowId, seenAt: rt.clock.now(), redrives: 0 });
  await rt.store.executions.createExecution(scope, execution);
  const ready = readySteps(execution.definition, execution.steps);
  await sendSteps(rt, scope, execution, ready);
  await rt.store.executions.markQueued(scope, execution, ready);
  return execution;
}

export interface RerunRequest {
  fromStep: string;
  /** The original's when not given. */
  input?: string;
  parameters?: Record<string, unknown>;
  keyId?: string;
  /** A version or alias to run; without either, the definition the original ran. */
  target?: WorkflowTarget;
}

/**
 * A new execution of a finished one from `fromStep`: the steps that succeeded (or were skipped)
 * and do not depend on `fromStep`, directly or through others, keep their outputs and are not run
 * again, so none of their effects repeat; `fromStep`, what follows from it, and whatever had not
 * succeeded, run.
 */
export async function rerunExecution(rt: Runtime, scope: TenantScope, workflowId: string, executionId: string, request: RerunRequest): Promise<ExecutionRecord> {
  const original = await getExecution(rt, scope, workflowId, executionId);
  if (!FINISHED.has(original.status)) throw new ConflictError(`Execution ${executionId} is ${original.status}; only a finished execution can be re-run`, { status: original.status });
  const id = newId('execution', rt.clock.now());
  const chosen = request.target?.version !== undefined || request.target?.alias !== undefined ? await workflowForRun(rt, scope, workflowId, request.target, id) : undefined;
  const definition = chosen ? definitionOf(chosen.workflow.steps) : original.definition;
  if (!definition.some((s) => s.id === request.fromStep)) {
    throw new ValidationError('fromStep', `is not a step of this workflow${chosen ? `'s version ${String(chosen.workflowVersion)}` : ' as the execution ran it'} (steps: ${definition.map((s) => s.id).join(', ')})`);
  }
  const again = dependentsOf(definition, request.fromStep);
  const reused: Record<string, StepState> = {};
  for (const step of definition) {
    const before = original.steps[step.id];
    if (again.has(step.id) || !before || before.type !== step.type || (before.status !== 'succeeded' && before.status !== 'skipped')) continue;
    const { leaseUntil: _lease, ...kept } = before;
    reused[step.id] = { ...kept, reused: true };
  }
  return launch(rt, scope, {
    id,
    workflowId,
    workflowVersion: chosen?.workflowVersion ?? original.workflowVersion,
    definition,
    input: request.input ?? original.input,
    parameters: request.parameters ?? original.parameters,
    keyId: request.keyId ?? original.keyId,
    user: original.user,
    webhook: original.webhook,
    rerunOf: { executionId, fromStep: request.fromStep },
    reused,
  });
}

/** A step and every step that depends on it, directly or through others. */
function dependentsOf(definition: Definition, stepId: string): Set<string> {
  const found = new Set([stepId]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const s of definition) {
      if (!found.has(s.id) && s.dependsOn.some((d) => found.has(d))) {
        found.add(s.id);
        grew = true;
      }
    }
  }
  return found;
}

export interface ExecuteRequest {
  input: string;
  parameters: Record<string, unknown>;
  keyId?: string;
  /** The end user it acts for. */
  user?: EndUser;
  webhook?: WebhookInput;
  /** A version or alias of the workflow to run; without either, its draft. */
  target?: WorkflowTarget;
}

export const FINISHED = new Set(['succeeded', 'failed', 'canceled']);

/**
 * Resolves when this process changes the execution (it runs its steps: local mode), with the record
 * that write left when it has it; or after `maxMs` with nothing (the steps run elsewhere: read it).
 */
export function nextChange(rt: Runtime, executionId: string, maxMs: number): Promise<ExecutionRecord | undefined> {
  const changes = rt.store.executions.changes;
  return new Promise((resolve) => {
    const done = (record?: ExecutionRecord) => {
      clearTimeout(timer);
      changes.off(executionId, done);
      resolve(record);
    };
    const timer = setTimeout(() => done(), Math.max(0, maxMs));
    changes.on(executionId, done);
  });
}

/**
 * Starts an execution and waits up to `waitMs` for it to finish; `finished` says whether it did
 * (else the caller answers 202 and the client polls). One that waits for a person is answered at
 * once, unfinished.
 */
export async function executeAndWait(
  rt: Runtime,
  scope: TenantScope,
  workflowId: string,
  request: ExecuteRequest,
  waitMs: number,
): Promise<{ execution: ExecutionRecord; finished: boolean }> {
  let execution = await startExecution(rt, scope, workflowId, request);
  const deadline = rt.clock.now() + waitMs;
  let pause = 20;
  while (!FINISHED.has(execution.status) && execution.status !== 'waiting' && rt.clock.now() < deadline) {
    const changed = await nextChange(rt, execution.id, Math.min(pause, deadline - rt.clock.now()));
    pause = Math.min(1000, pause * 1.5);
    // A write of this process says what it left; otherwise (a write without the record, or none yet) the record is read.
    execution = changed ?? (await rt.store.executions.getExecution(scope, workflowId, execution.id)) ?? execution;
  }
  return { execution, finished: FINISHED.has(execution.status) };
}

/** An execution of the tenant's workflow, or a 404. */
export async function getExecution(rt: Runtime, scope: TenantScope, workflowId: string, executionId: string): Promise<ExecutionRecord> {
  const record = isId('execution', executionId) ? await rt.store.executions.getExecution(scope, workflowId, executionId) : undefined;
  if (!record) throw new NotFoundError('execution', executionId);
  return record;
}

/** An execution's completion webhook deliveries, oldest first, as responses show them. */
export async function listDeliveries(rt: Runtime, scope: TenantScope, workflowId: string, executionId: string) {
  await getExecution(rt, scope, workflowId, executionId);
  return (await rt.store.webhookDeliveries.listDeliveries(scope, executionId)).map(presentDelivery);
}

/** A workflow's executions, newest first (the workflow must exist). */
export async function listExecutions(rt: Runtime, scope: TenantScope, workflowId: string, page: { limit: number; cursor?: string; status?: ExecutionStatus }) {
  await workflows.get(rt, scope, workflowId);
  return rt.store.executions.listExecutions(scope, workflowId, page);
}

/** Cancels a running execution; one that already finished is a 409. */
export async function cancelExecution(rt: Runtime, scope: TenantScope, workflowId: string, executionId: string): Promise<ExecutionRecord> {
  let current = await getExecution(rt, scope, workflowId, executionId);
  let canceled = await rt.store.executions.cancelExecution(scope, current);
  // A step settled between the read and the write: read again, until the execution has ended.
  while (!canceled && !FINISHED.has(current.status)) {
    current = await getExecution(rt, scope, workflowId, executionId);
    if (FINISHED.has(current.status)) break;
    canceled = await rt.store.executions.cancelExecution(scope, current);
  }
  await rt.store.unfinishedWork.remove({ kind: 'execution', tenantId: scope.tenantId, id: executionId });
  await rt.store.executions.removeWaiting(scope, executionId);
  if (!canceled) throw new ConflictError(`Execution ${executionId} is already ${current.status}`, { status: current.status });
  // Background runs its agent steps wait for stop too (where this function can reach runs; elsewhere a run ends by its own limits and finds the execution canceled).
  const runs = Object.values(current.steps).flatMap((s) => (s.status === 'waiting' && s.run ? [s.run] : []));
  const agentRuns = rt.agentRuns;
  if (agentRuns) await Promise.all(runs.map((r) => agentRuns.cancel(rt, scope, r.agentId, r.runId)));
  await notifyWebhook(rt, scope, canceled, 'canceled');
  return canceled;
}

/** An execution as the API shows it: steps in definition order, no internal lease fields, its webhook's secret shown only as set. */
export function presentExecution(execution: ExecutionRecord) {
  const { definition, steps, keyId: _keyId, webhook, ...rest } = execution;
  return {
    ...rest,
    ...(webhook ? { webhook: showWebhook(webhook) } : {}),
    steps: definition.map((s) => {
      const { leaseUntil: _lease, request, map, ...state } = steps[s.id]!;
      return {
        ...state,
        ...(request ? { request: { ...request, ...(request.expiresAt ? { expiresAt: new Date(request.expiresAt).toISOString() } : {}) } } : {}),
        // Each settled item counts a start for the next, past the last one: shown as items started.
        ...(map ? { map: { ...map, started: Math.min(map.started, map.total) } } : {}),
      };
    }),
  };
}
