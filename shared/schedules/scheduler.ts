import { AppError } from '../errors';
import type { Scheduler } from '../runtime';
import type { Store } from '../store';

/**
 * The two homes of workflows' schedules. Local mode keeps them in the table, where its ticker
 * (schedules.ts) finds the due ones; a function given no scheduler refuses schedules, naming what
 * it lacks, and has nothing to remove.
 */
export const unconfiguredScheduler: Scheduler = {
  async put(_scope, workflowId, schedules, previous) {
    if (schedules.length > 0 || previous > 0) throw new AppError('INTERNAL_ERROR', `This function cannot keep schedules (workflow ${workflowId}): set SCHEDULE_GROUP_NAME`);
  },
};

/** Schedules stored for local mode's ticker, each with its next time. */
export function storedScheduler(store: Store, nextRunOf: (schedule: { cron: string; timezone: string }, after: number) => number | undefined, now: () => number): Scheduler {
  return {
    async put(scope, workflowId, schedules, previous) {
      const kept = schedules.flatMap((s, index) => {
        const next = s.enabled ? nextRunOf(s, now()) : undefined;
        return next === undefined ? [] : [{ tenantId: scope.tenantId, workflowId, index, cron: s.cron, timezone: s.timezone, nextRunAt: next }];
      });
      await store.schedules.replace(scope.tenantId, workflowId, kept, Math.max(previous, schedules.length));
    },
  };
}
