import { config } from '../config';
import { errorFields, log } from '../log';
import type { Delivery } from '../queue/queue';
import type { Runtime } from '../runtime';
import { meteringSearches, type SearchWork } from '../search/search-meter';
import type { ExecutionRecord } from '../store/executions';
import type { MapItem } from '../store/map-items';
import type { TenantScope } from '../tenancy';
import { stepKind } from './steps';
import { modelUsageOf, type StepLike, type StepResult } from './steps/step-kind';
import { recordUsage } from '../usage';
import { checkBackSeconds, whileLeased } from '../queue/work-lease';
import { afterSettle, sendItems } from './progress';
import { addOutput, failedAttempt, runToResult, type DefinedStep, type RunScope } from './step-run';

/**
 * A step that fans out (a `map`): its items are stored, the first `concurrency` of them sent as
 * messages; each settled item sends the next, so at most `concurrency` run at once; the item that
 * brings the count to the total collects the outputs in order and settles the step. An item runs
 * the step's `nested` steps in sequence, retried as a whole under the step's retry policy. Items
 * are claimed and settled like steps (a duplicate message runs an item once); the sweeper's
 * re-drive sends what was lost and collects a step whose every item settled.
 */

/** The outputs a map step may keep in its execution record (DynamoDB items hold 400 KB). */
export const MAX_MAP_OUTPUT_BYTES = 300 * 1024;

/** How a step fans out, from its kind; undefined for a kind that does not. */
function fanOutOf(step: DefinedStep): { steps: StepLike[]; concurrency: number; failFast: boolean } | undefined {
  const kind = stepKind(step.type);
  if (!kind?.fansOut || !kind.nested) return undefined;
  return { steps: kind.nested.steps(step.config), concurrency: kind.fansOut.concurrency(step.config), failFast: kind.fansOut.failFast(step.config) };
}

/** Stores a step's items and sends the first `concurrency` of them. */
export async function startFanOut(rt: Runtime, scope: TenantScope, execution: ExecutionRecord, step: DefinedStep, attempt: number, items: unknown[]): Promise<void> {
  const how = fanOutOf(step)!;
  await rt.store.mapItems.putItems(scope, execution.id, step.id, items);
  const started = Math.min(how.concurrency, items.length);
  const mapping = await rt.store.executions.startMap(scope, execution, step.id, attempt, { total: items.length, started, done: 0, failed: 0 });
  if (mapping) await sendItems(rt, scope, execution, step.id, [...Array(started).keys()]);
}

/** Runs the step's nested steps for one item, in order; the last one's output is the item's. */
async function runItem(rt: Runtime, scope: TenantScope, execution: ExecutionRecord, steps: StepLike[], item: MapItem, run: RunScope): Promise<{ output: unknown; results: StepResult[] }> {
  const local: RunScope = { vars: { ...run.vars, outputs: { ...run.vars.outputs }, item: item.value, index: item.index }, passages: run.passages };
  const results: StepResult[] = [];
  let output: unknown = null;
  for (const sub of steps) {
    const result = await runToResult(rt, scope, sub, local, execution.keyId);
    results.push(result);
    addOutput(local, sub, result.output);
    output = result.output;
  }
  return { output, results };
}

/** Runs one item of a step that fanned out, settles it, and sends the next or collects the step. */
export async function handleItem(rt: Runtime, scope: TenantScope, execution: ExecutionRecord, step: DefinedStep, index: number, run: RunScope, delivery: Delivery): Promise<void> {
  const state = execution.steps[step.id]!;
  const how = fanOutOf(step);
  if (execution.status !== 'running' || state.status !== 'running' || !state.map || !how) return;
  const claimed = await rt.store.mapItems.claimItem(scope, execution.id, step.id, index, config.workLeaseMs);
  if (!claimed) {
    const item = await rt.store.mapItems.getItem(scope, execution.id, step.id, index);
    const now = rt.clock.now();
    if (item?.status === 'running' && (item.leaseUntil ?? 0) > now) await sendItems(rt, scope, execution, step.id, [index], checkBackSeconds(item.leaseUntil!, now));
    return;
  }
  const searched: SearchWork = { searches: 0, readUnits: 0 };
  let outcome: Awaited<ReturnType<typeof runItem>> | { error: unknown };
  try {
    outcome = await whileLeased(
      () => rt.store.mapItems.renewItemLease(scope, execution.id, step.id, index, claimed.attempt, config.workLeaseMs),
      () => meteringSearches(searched, () => runItem(rt, scope, execution, how.steps, claimed, run)),
    );
  } catch (error) {
    outcome = { error };
  }
  if (!('error' in outcome)) {
    if (!(await rt.store.mapItems.settleItem(scope, execution.id, step.id, index, claimed.attempt, { status: 'succeeded', output: outcome.output }))) return;
    const subject = { kind: 'workflow' as const, id: execution.workflowId };
    for (const [i, r] of outcome.results.entries()) {
      const [first, ...more] = modelUsageOf(r);
      await recordUsage(rt, scope, { keyId: execution.keyId, subject, steps: 1, ...(i === 0 ? searched : {}), ...first });
      for (const m of more) await recordUsage(rt, scope, { keyId: execution.keyId, subject, ...m });
    }
    await advance(rt, scope, execution, step, false);
    return;
  }
  log.warn('map item failed', { executionId: execution.id, stepId: step.id, item: index, attempt: claimed.attempt, ...errorFields(outcome.error) });
  const { error: failure, retryInSeconds } = failedAttempt(outcome.error, claimed.attempt, step, delivery, 'The item failed');
  if (retryInSeconds !== undefined) {
    if (await rt.store.mapItems.settleItem(scope, execution.id, step.id, index, claimed.attempt, { status: 'retrying', error: failure })) {
      await sendItems(rt, scope, execution, step.id, [index], retryInSeconds);
    }
    return;
  }
  if (!(await rt.store.mapItems.settleItem(scope, execution.id, step.id, index, claimed.attempt, { status: 'failed', error: failure }))) return;
  if (how.failFast) {
    const settled = await rt.store.executions.settleStep(scope, execution, step.id, state.attempt, { status: 'failed', error: { code: failure.code, message: `item ${index} failed: ${failure.message}` }, startedAt: state.startedAt! });
    if (settled) await afterSettle(rt, scope, settled);
    return;
  }
  await advance(rt, scope, execution, step, true);
}

/** Counts a settled item and sends the next one; the last item collects the map. */
async function advance(rt: Runtime, scope: TenantScope, execution: ExecutionRecord, step: DefinedStep, failed: boolean): Promise<void> {
  const updated = await rt.store.executions.advanceMap(scope, execution, step.id, failed);
  const progress = updated?.steps[step.id]?.map;
  if (!updated || !progress) return;
  if (progress.started <= progress.total) await sendItems(rt, scope, execution, step.id, [progress.started - 1]);
  if (progress.done >= progress.total) await collectItems(rt, scope, updated, step);
}

/** Settles a step whose every item settled: outputs in item order, failed items listed. */
async function collectItems(rt: Runtime, scope: TenantScope, execution: ExecutionRecord, step: DefinedStep): Promise<boolean> {
  const state = execution.steps[step.id]!;
  const items = await rt.store.mapItems.listItems(scope, execution.id, step.id);
  if (items.length < (state.map?.total ?? 0) || items.some((i) => i.status !== 'succeeded' && i.status !== 'failed')) return false;
  const errors = items.filter((i) => i.status === 'failed').map((i) => ({ index: i.index, error: i.error }));
  const output = { results: items.map((i) => (i.status === 'succeeded' ? (i.output ?? null) : null)), errors };
  let result: Parameters<Runtime['store']['executions']['settleStep']>[4];
  if (errors.length > 0 && fanOutOf(step)?.failFast) {
    result = { status: 'failed', error: { code: errors[0]!.error?.code ?? 'INTERNAL_ERROR', message: `item ${errors[0]!.index} failed: ${errors[0]!.error?.message ?? ''}` }, startedAt: state.startedAt! };
  } else if (Buffer.byteLength(JSON.stringify(output)) > MAX_MAP_OUTPUT_BYTES) {
    result = { status: 'failed', error: { code: 'UNPROCESSABLE', message: `The items' outputs pass ${MAX_MAP_OUTPUT_BYTES} bytes: end the map's steps with a transform that keeps less` }, startedAt: state.startedAt! };
  } else {
    result = { status: 'succeeded', output, startedAt: state.startedAt! };
  }
  const settled = await rt.store.executions.settleStep(scope, execution, step.id, state.attempt, result);
  if (settled) await afterSettle(rt, scope, settled);
  return true;
}

/**
 * Sends again what a fanned-out step waits on (the sweeper, when messages were lost): its
 * unsettled items with no live lease, at most `concurrency` of them; a step whose every item
 * settled is collected.
 */
export async function redriveItems(rt: Runtime, scope: TenantScope, execution: ExecutionRecord, step: DefinedStep): Promise<number[]> {
  if (await collectItems(rt, scope, execution, step)) return [];
  const now = rt.clock.now();
  const items = await rt.store.mapItems.listItems(scope, execution.id, step.id);
  const open = items.filter((i) => i.status === 'pending' || i.status === 'retrying' || (i.status === 'running' && (i.leaseUntil ?? 0) <= now));
  const live = items.filter((i) => i.status === 'running' && (i.leaseUntil ?? 0) > now).length;
  const resend = open.slice(0, Math.max(1, (fanOutOf(step)?.concurrency ?? 1) - live)).map((i) => i.index);
  await sendItems(rt, scope, execution, step.id, resend);
  return resend;
}
