import { z } from '@hono/zod-openapi';
import { Cron } from 'croner';
import { aliasName } from '../releases';

/** A workflow's cron schedules as requests give them (checked with croner, in their time zone). */
export const MAX_SCHEDULES = 10;

function cronProblem(cron: string, timezone: string): string | undefined {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5) return 'must have five fields: minute hour day-of-month month day-of-week';
  // EventBridge Scheduler takes one of the two day fields, not both (cron's "either" has no equivalent there).
  if (fields[2] !== '*' && fields[2] !== '?' && fields[4] !== '*' && fields[4] !== '?') return 'may restrict the day of the month or the day of the week, not both';
  try {
    new Cron(cron, { timezone, paused: true }).nextRun();
    return undefined;
  } catch (error) {
    return `is not a valid cron expression: ${(error as Error).message}`;
  }
}

const validZone = (zone: string) => {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
};

export const scheduleInput = z
  .strictObject({
    cron: z.string().max(200).openapi({ example: '0 9 * * 1-5', description: 'minute hour day-of-month month day-of-week' }),
    timezone: z.string().max(64).default('UTC').refine(validZone, { error: 'must be an IANA time zone, like Europe/Paris' }),
    input: z.string().max(100_000).default(''),
    parameters: z.record(z.string(), z.unknown()).default({}),
    enabled: z.boolean().default(true),
    alias: aliasName.optional().openapi({ description: 'Run the version this alias routes to (each run placed by weight); without it, the draft' }),
  })
  .superRefine((s, ctx) => {
    const problem = validZone(s.timezone) ? cronProblem(s.cron, s.timezone) : undefined;
    if (problem) ctx.addIssue({ code: 'custom', path: ['cron'], message: problem });
  })
  .openapi('Schedule');
export type Schedule = z.infer<typeof scheduleInput>;

/** The first time the schedule is due after `after` (epoch ms), or undefined when it never is again. */
export function nextRunOf(schedule: Pick<Schedule, 'cron' | 'timezone'>, after: number): number | undefined {
  return new Cron(schedule.cron, { timezone: schedule.timezone, paused: true }).nextRun(new Date(after))?.getTime();
}

