import { AppError } from '../errors';
import { log } from '../log';
import type { ScheduledMessage } from '../queue/messages';
import type { Runtime } from '../runtime';
import { scopeOf } from '../tenancy';
import { startExecution } from './executions';
import { workflows } from './workflow-records';
import { nextRunOf } from './schedule-schema';

/**
 * Schedules: a workflow may run on cron schedules (five fields, in an IANA time zone). In AWS each
 * schedule is an EventBridge Scheduler schedule that sends a `scheduled` message to the steps
 * queue; in local mode a ticker in the process reads the stored schedules and sends the same
 * message when one is due. Either way the worker starts the execution once per scheduled time.
 */
/** A due schedule: its workflow runs once for that scheduled time, with the schedule's input. */
export async function startScheduled(rt: Runtime, message: ScheduledMessage): Promise<void> {
  const scope = scopeOf(message.tenantId);
  const workflow = await workflows.get(rt, scope, message.workflowId).catch(() => undefined);
  const schedule = (workflow?.schedules)?.[message.schedule];
  if (!workflow || !schedule?.enabled) return;
  if (!(await rt.store.schedules.markFired(message.tenantId, message.workflowId, message.schedule, message.at))) return;
  try {
    await startExecution(rt, scope, workflow.id, { input: schedule.input, parameters: schedule.parameters, keyId: `schedule:${message.schedule}`, target: { alias: schedule.alias } });
  } catch (error) {
    // An alias deleted since the schedule was written: this time is skipped (it has fired), not retried.
    if (!(error instanceof AppError) || error.code !== 'NOT_FOUND') throw error;
    log.warn('scheduled run skipped', { tenantId: message.tenantId, workflowId: workflow.id, schedule: message.schedule, reason: error.message });
  }
}

/**
 * Local mode's ticker: sends the schedules that are due at `now` (each taken with a conditional
 * write, so two processes over one table fire it once) and moves them to their next time.
 */
export async function tickSchedules(rt: Runtime, now: number): Promise<number> {
  let sent = 0;
  for (const due of await rt.store.schedules.due(now)) {
    const next = nextRunOf(due, now);
    if (!(await rt.store.schedules.advance(due, next))) continue;
    await rt.queues.workflowSteps.send([{ type: 'scheduled', tenantId: due.tenantId, workflowId: due.workflowId, schedule: due.index, at: new Date(due.nextRunAt).toISOString() }]);
    sent++;
  }
  return sent;
}
