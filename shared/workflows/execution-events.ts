import type { Runtime } from '../runtime';
import type { ExecutionRecord, StepState } from '../store/executions';
import type { TenantScope } from '../tenancy';
import { FINISHED, nextChange } from './executions';

/**
 * An execution's progress as events, read from its record as it changes: a snapshot first, then
 * each step's transitions (started, retrying, waiting, progress of a map, succeeded, failed,
 * skipped), the execution's waits, and `execution.finished`, after which the stream ends. The
 * record is the truth: in the process that runs the steps (local mode) changes wake the reader at
 * once; elsewhere it reads again after a pause that grows from 100 ms to 1 s while nothing changes.
 */
const PING_EVERY_MS = 30_000;

export interface ExecutionEvent {
  event: string;
  data: Record<string, unknown>;
}

const STEP_EVENTS: Partial<Record<StepState['status'], string>> = {
  running: 'step.started',
  retrying: 'step.retrying',
  waiting: 'step.waiting',
  succeeded: 'step.succeeded',
  failed: 'step.failed',
  skipped: 'step.skipped',
  canceled: 'step.canceled',
};

/** What changed from `before` to `after`, as events. */
export function eventsBetween(before: ExecutionRecord | undefined, after: ExecutionRecord): ExecutionEvent[] {
  const events: ExecutionEvent[] = [];
  for (const step of after.definition) {
    const was = before?.steps[step.id];
    const now = after.steps[step.id]!;
    const moved = !was || was.status !== now.status || was.attempt !== now.attempt;
    if (moved && STEP_EVENTS[now.status]) {
      const data: Record<string, unknown> = { stepId: now.id, type: now.type, status: now.status, attempt: now.attempt };
      if (now.status === 'succeeded') Object.assign(data, { output: now.output, durationMs: now.durationMs });
      if (now.status === 'failed' || now.status === 'retrying') data.error = now.error;
      if (now.status === 'waiting') data.request = now.request;
      events.push({ event: STEP_EVENTS[now.status]!, data });
    }
    if (now.map && now.status === 'running' && (was?.map?.done !== now.map.done || !was?.map)) {
      events.push({ event: 'step.progress', data: { stepId: now.id, total: now.map.total, done: now.map.done, failed: now.map.failed } });
    }
  }
  if (before?.status !== after.status) {
    if (after.status === 'waiting') events.push({ event: 'execution.waiting', data: { id: after.id, status: after.status } });
    if (FINISHED.has(after.status)) {
      events.push({ event: 'execution.finished', data: { id: after.id, status: after.status, ...(after.output !== undefined ? { output: after.output } : {}), ...(after.error ? { error: after.error } : {}), finishedAt: after.finishedAt } });
    }
  }
  return events;
}

/**
 * Follows an execution until it finishes, `signal` aborts or `maxMs` passes, reading its record
 * as it changes; `emit` gets each event. The first record is sent whole (`snapshot`).
 */
export async function followExecution(
  rt: Runtime,
  scope: TenantScope,
  first: ExecutionRecord,
  emit: (event: ExecutionEvent) => Promise<void>,
  options: { signal?: AbortSignal; maxMs: number; snapshot: (e: ExecutionRecord) => Record<string, unknown> },
): Promise<void> {
  await emit({ event: 'snapshot', data: options.snapshot(first) });
  let last = first;
  if (FINISHED.has(last.status)) return;
  const until = rt.clock.now() + options.maxMs;
  let pause = 100;
  let lastSent = rt.clock.now();
  while (!options.signal?.aborted && rt.clock.now() < until) {
    await nextChange(rt, first.id, Math.min(pause, until - rt.clock.now()));
    const now = await rt.store.executions.getExecution(scope, first.workflowId, first.id);
    if (!now) return;
    const events = eventsBetween(last, now);
    last = now;
    pause = events.length > 0 ? 100 : Math.min(1000, pause * 1.5);
    // A quiet stream (a person not answering yet) says it is alive: proxies close idle ones (API Gateway after 5 minutes).
    if (events.length === 0 && rt.clock.now() - lastSent > PING_EVERY_MS) events.push({ event: 'ping', data: { at: new Date(rt.clock.now()).toISOString() } });
    for (const event of events) await emit(event);
    if (events.length > 0) lastSent = rt.clock.now();
    if (FINISHED.has(now.status)) return;
  }
}
