import { config } from '../config';
import { AppError, isRetryable, UpstreamError } from '../errors';
import type { Delivery } from '../queue/queue';
import type { Runtime } from '../runtime';
import type { ExecutionRecord } from '../store/executions';
import type { TenantScope } from '../tenancy';
import { stepKind } from './steps';
import type { RunScope, StepContext, StepLike, StepOutcome, StepResult } from './steps/step-kind';
import { DEFAULT_RETRY, type RetryPolicy } from './steps/step-schema';
import { userView } from '../identity';

/**
 * Running one step's work, shared by the steps of a workflow and the steps of a map's items: what
 * its templates read, its time limit, and its retry policy.
 */
export type Definition = ExecutionRecord['definition'];
export type DefinedStep = Definition[number] & { retry?: RetryPolicy; timeoutSeconds?: number; config: Record<string, unknown> };
export type { RunScope };
/** A step as it runs, wherever it stands (a map's own steps have no `dependsOn`). */
export type RunnableStep = StepLike & { retry?: RetryPolicy; timeoutSeconds?: number };

/** Adds a settled step's output to what later steps read. */
export function addOutput(into: RunScope, step: { id: string; type: string }, output: unknown): void {
  into.vars.outputs[step.id] = output;
  stepKind(step.type)?.publishes?.into(output, into);
}

/** The outputs the step at `stepIndex` may read: every step before it that succeeded. */
export function runScopeOf(execution: ExecutionRecord, stepIndex: number): RunScope {
  const scope: RunScope = { vars: { input: execution.input, parameters: execution.parameters, outputs: {}, user: userView(execution.user) } };
  for (const step of execution.definition.slice(0, stepIndex)) {
    const state = execution.steps[step.id];
    if (state?.status === 'succeeded') addOutput(scope, step, state.output);
  }
  return scope;
}

const retryOf = (step: { retry?: RetryPolicy }): RetryPolicy => ({ ...DEFAULT_RETRY, ...step.retry });

/** Seconds before attempt `attempt + 1` (SQS delays at most 900 s). */
function backoffSeconds(policy: RetryPolicy, attempt: number): number {
  const delay = policy.backoff === 'fixed' ? policy.delaySeconds : Math.min(policy.maxDelaySeconds, policy.delaySeconds * 2 ** (attempt - 1));
  return Math.min(900, delay);
}

/**
 * A failed attempt of a step (or of a map item): what it records, and in how many seconds it is
 * tried again — only an error the shared rule calls retryable, within the step's attempts and
 * before the queue's last delivery; undefined: it has failed.
 */
export function failedAttempt(error: unknown, attempt: number, step: { retry?: RetryPolicy }, delivery: Delivery, fallback: string): { error: { code: string; message: string }; retryInSeconds?: number } {
  const appError = error instanceof AppError ? error : new AppError('INTERNAL_ERROR', fallback);
  const policy = retryOf(step);
  const again = isRetryable(error) && attempt < policy.maxAttempts && delivery.receiveCount < delivery.maxReceives;
  return { error: { code: appError.code, message: appError.message }, ...(again ? { retryInSeconds: backoffSeconds(policy, attempt) } : {}) };
}

export const timeoutMsOf = (step: { timeoutSeconds?: number }) => (step.timeoutSeconds ? step.timeoutSeconds * 1000 : config.modelTimeoutMs);

/**
 * Runs one step under its time limit: the kind's calls get the deadline, and a kind that does not
 * stop in time is left behind with a retryable timeout.
 */
export async function runStep(rt: Runtime, scope: TenantScope, step: RunnableStep, run: RunScope, keyId: string | undefined, at?: StepContext['at']): Promise<StepOutcome> {
  const kind = stepKind(step.type);
  if (!kind) throw new AppError('INTERNAL_ERROR', `step ${step.id} has an unknown type ${step.type}`);
  const timeoutMs = timeoutMsOf(step);
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new UpstreamError(`The step took longer than its ${timeoutMs / 1000} s`, { reason: 'timeout' }, { retryable: true }));
    }, timeoutMs);
  });
  try {
    return await Promise.race([kind.execute(step.config, { rt, scope, vars: run.vars, passages: run.passages, deadline: controller.signal, timeoutMs, keyId, ...(at ? { at } : {}) }), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs a step that must give a result (a map item's steps: the schema admits only kinds that do). */
export async function runToResult(rt: Runtime, scope: TenantScope, step: RunnableStep, run: RunScope, keyId: string | undefined): Promise<StepResult> {
  const outcome = await runStep(rt, scope, step, run, keyId);
  if (!('output' in outcome)) throw new AppError('INTERNAL_ERROR', `step ${step.id} paused or fanned out where only a result can be taken`);
  return outcome;
}
