import { config } from './config';
import { errorFields, log } from './log';
import type { Runtime, RuntimeWith } from './runtime';
import type { UnfinishedWork } from './store/unfinished-work';
import { scopeOf } from './tenancy';
import { onFirstUse } from './load-once';

// Loaded when there is work of their kind to sweep: most sweeps find none.
const knowledge = onFirstUse(() => import('./knowledge-work'));
const workflows = onFirstUse(() => import('./workflow-work'));
const runs = onFirstUse(() => import('./run-work'));

/**
 * The safety net under the queues: executions, syncs and runs whose messages were lost (a process died
 * between saving the work and sending its message, a message was dead-lettered) would otherwise
 * stay `running` / `indexing` forever. The sweeper looks at every unfinished one; one that made
 * no progress for SWEEP_AFTER_SECONDS, and that no live lease says someone is working on, is sent
 * again, and after MAX_REDRIVES fruitless re-drives it is failed with a reason. Time alone is no
 * evidence of loss: while its queue still holds messages (waiting, delayed or in hand), the work
 * may be queued behind them, so it is left to wait; only work that made no progress while its
 * queue was empty is re-driven and, in the end, failed. Re-driving is safe: every consumer is
 * idempotent and claims its work.
 */
export const MAX_REDRIVES = 3;

export type SweepOutcome = 'finished' | 'progressing' | 'waiting' | 'redriven' | 'failed';

export interface SweepReport {
  checked: number;
  outcomes: Record<SweepOutcome, number>;
}

const LOST = 'Its work was lost and sending it again did not help';

/** Whether a queue holds messages, asked once a pass (SQS answers approximately; either way it is evidence, not a guess from time). */
type Backlog = () => Promise<boolean>;

async function sweepExecution(rt: Runtime, work: Extract<UnfinishedWork, { kind: 'execution' }>, now: number, afterMs: number, backlog: Backlog): Promise<SweepOutcome> {
  const { finishExecution, redriveExecution, sendSteps } = await workflows();
  const scope = scopeOf(work.tenantId);
  const execution = await rt.store.executions.getExecution(scope, work.workflowId, work.id);
  if (!execution || (execution.status !== 'running' && execution.status !== 'waiting')) {
    await rt.store.unfinishedWork.remove(work);
    return 'finished';
  }
  const steps = Object.values(execution.steps);
  if (execution.status === 'waiting') {
    // Waiting for a person is not being stuck; a timeout whose message was lost is sent again.
    const overdue = steps.filter((s) => s.status === 'waiting' && s.request?.expiresAt !== undefined && s.request.expiresAt + afterMs < now).map((s) => s.id);
    await sendSteps(rt, scope, execution, [...overdue, ...steps.filter((s) => s.status === 'waiting' && s.run).map((s) => s.id)]);
    return 'waiting';
  }
  // A step waiting for a background run is not stuck while the run works (the run has its own
  // sweeping); its check is sent again in case the run's end was lost on the way.
  const awaiting = steps.filter((s) => s.status === 'waiting' && s.run).map((s) => s.id);
  if (awaiting.length > 0 && !steps.some((s) => s.status === 'queued' || s.status === 'retrying' || s.status === 'running')) {
    if (now - work.seenAt >= afterMs) await sendSteps(rt, scope, execution, awaiting);
    return 'waiting';
  }
  const seen = JSON.stringify(steps.map((s) => [s.id, s.status, s.attempt, s.map?.done ?? null]));
  if (seen !== work.seen) {
    await rt.store.unfinishedWork.put({ ...work, seen, seenAt: now, redrives: 0 });
    return 'progressing';
  }
  // A step on a live lease is being worked on (its worker renews the lease while it runs).
  if (now - work.seenAt < afterMs || steps.some((s) => s.status === 'running' && (s.leaseUntil ?? 0) > now)) return 'waiting';
  // A map's items hold their own leases: one being worked on is progress not yet counted.
  for (const step of steps.filter((s) => s.status === 'running' && s.map)) {
    const items = await rt.store.mapItems.listItems(scope, execution.id, step.id);
    if (items.some((i) => i.status === 'running' && (i.leaseUntil ?? 0) > now)) return 'waiting';
  }
  // Its messages may be behind others in the queue: not lost while the queue is not empty.
  if (await backlog()) return 'waiting';
  if (work.redrives >= MAX_REDRIVES) {
    await finishExecution(rt, scope, execution, { status: 'failed', error: { code: 'INTERNAL_ERROR', message: `The execution stopped making progress. ${LOST}.` } });
    return 'failed';
  }
  const sent = await redriveExecution(rt, scope, execution);
  await rt.store.unfinishedWork.put({ ...work, seenAt: now, redrives: work.redrives + 1 });
  log.warn('sweeper: execution re-driven', { tenantId: work.tenantId, executionId: work.id, steps: sent, redrive: work.redrives + 1 });
  return 'redriven';
}

async function sweepSync(rt: Runtime, work: Extract<UnfinishedWork, { kind: 'sync' }>, now: number, afterMs: number, backlog: Backlog): Promise<SweepOutcome> {
  const { knowledgeSources, setStatus, startSync } = await knowledge();
  const scope = scopeOf(work.tenantId);
  const source = await knowledgeSources.find(rt, scope, work.id);
  if (!source || source.syncId !== work.syncId || source.status === 'ready' || source.status === 'failed') {
    await rt.store.unfinishedWork.remove(work);
    return 'finished';
  }
  const sync = await rt.store.syncLedger.getSync(scope, work.id, work.syncId);
  const seen = JSON.stringify([source.status, sync?.sent ?? false, sync?.done.length ?? 0]);
  if (seen !== work.seen) {
    await rt.store.unfinishedWork.put({ ...work, seen, seenAt: now, redrives: 0 });
    return 'progressing';
  }
  const planning = sync !== undefined && !sync.sent && (sync.leaseUntil ?? 0) > now;
  if (now - work.seenAt < afterMs || planning || (await backlog())) return 'waiting';
  if (work.redrives >= MAX_REDRIVES) {
    await setStatus(rt, scope, work.id, { status: 'failed', error: { code: 'INTERNAL_ERROR', message: `The sync stopped making progress. ${LOST}; sync the source again.` } }, work.syncId);
    return 'failed';
  }
  if (!sync?.sent) {
    // Planning never finished: its message is sent again (the planning lease has run out).
    await rt.queues.ingestion.send([{ type: 'sync', tenantId: work.tenantId, sourceId: work.id, syncId: work.syncId }]);
    await rt.store.unfinishedWork.put({ ...work, seenAt: now, redrives: work.redrives + 1 });
  } else {
    // Batches were lost; they are not kept, so a new sync plans again (only what is not yet indexed).
    await startSync(rt, scope, work.id, work.redrives + 1);
  }
  log.warn('sweeper: sync re-driven', { tenantId: work.tenantId, sourceId: work.id, syncId: work.syncId, redrive: work.redrives + 1 });
  return 'redriven';
}

async function sweepRun(rt: Runtime, work: Extract<UnfinishedWork, { kind: 'run' }>, now: number, afterMs: number, backlog: Backlog): Promise<SweepOutcome> {
  const { sendRunStep, failLostRun } = await runs();
  const scope = scopeOf(work.tenantId);
  const run = await rt.store.runs.getRun(scope, work.agentId, work.id);
  if (!run || ['completed', 'failed', 'cancelled', 'expired'].includes(run.status)) {
    await rt.store.unfinishedWork.remove(work);
    return 'finished';
  }
  // Waiting for a person is not being stuck (a run past its time is expired by its next message).
  if (run.status === 'requires_action' && now <= run.deadline) return 'waiting';
  const seen = JSON.stringify([run.step, run.phase, run.seq, run.status]);
  if (seen !== work.seen) {
    await rt.store.unfinishedWork.put({ ...work, seen, seenAt: now, redrives: 0 });
    return 'progressing';
  }
  // A step on a live lease is being worked on; messages may be behind others in the queue.
  if (now - work.seenAt < afterMs || (run.leaseUntil ?? 0) > now || (await backlog())) return 'waiting';
  if (work.redrives >= MAX_REDRIVES) {
    await failLostRun(rt, scope, run, `The run stopped making progress. ${LOST}.`);
    return 'failed';
  }
  await sendRunStep(rt, scope, run);
  await rt.store.unfinishedWork.put({ ...work, seenAt: now, redrives: work.redrives + 1 });
  log.warn('sweeper: run re-driven', { tenantId: work.tenantId, runId: work.id, step: run.step, phase: run.phase, redrive: work.redrives + 1 });
  return 'redriven';
}

/** One pass over the unfinished work (of one tenant, when given). */
export async function sweep(rt: RuntimeWith<'queues'>, options: { afterMs?: number; tenantId?: string } = {}): Promise<SweepReport> {
  const now = rt.clock.now();
  const afterMs = options.afterMs ?? config.sweepAfterMs;
  const report: SweepReport = { checked: 0, outcomes: { finished: 0, progressing: 0, waiting: 0, redriven: 0, failed: 0 } };
  const backlogOf = (queue: { pending(): Promise<number> }): Backlog => {
    let asked: Promise<boolean> | undefined;
    return () => (asked ??= queue.pending().then((n) => n > 0));
  };
  const steps = backlogOf(rt.queues.workflowSteps);
  const ingestion = backlogOf(rt.queues.ingestion);
  for (const work of await rt.store.unfinishedWork.list()) {
    if (options.tenantId && work.tenantId !== options.tenantId) continue;
    report.checked++;
    try {
      const outcome =
        work.kind === 'execution' ? await sweepExecution(rt, work, now, afterMs, steps) : work.kind === 'run' ? await sweepRun(rt, work, now, afterMs, steps) : await sweepSync(rt, work, now, afterMs, ingestion);
      report.outcomes[outcome]++;
    } catch (error) {
      log.error('sweeper: could not check work', { kind: work.kind, tenantId: work.tenantId, id: work.id, ...errorFields(error) });
    }
  }
  return report;
}
