import { createHash } from 'node:crypto';
import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import { config } from '../config';
import { loadOnce } from '../load-once';
import type { Scheduler } from '../runtime';
import { awsCronOf } from './aws-cron';
import { unconfiguredScheduler } from './scheduler';

/**
 * Workflows' schedules as EventBridge Scheduler schedules, one per schedule, in the stack's group:
 * each sends a `scheduled` message (its time filled in by the Scheduler) to the steps queue, with
 * the role the stack made for it. Names are a hash of tenant and workflow and the position, so a
 * workflow's schedules are found again without listing.
 */
export interface EventBridgeSchedulerOptions {
  groupName: string;
  roleArn: string;
  queueArn: string;
  client?: SchedulerClient;
}

export const scheduleName = (tenantId: string, workflowId: string, index: number) => `cairn-${createHash('sha256').update(`${tenantId}/${workflowId}`).digest('hex').slice(0, 32)}-${index}`;

/** The SDK's Scheduler module, loaded with the first schedule a function writes, not at its cold start. */
const sdk = loadOnce(() => import('@aws-sdk/client-scheduler'));

export function eventBridgeScheduler(options: EventBridgeSchedulerOptions): Scheduler {
  const made = loadOnce(async () => options.client ?? new (await sdk()).SchedulerClient({ region: config.region, ...(config.schedulerEndpoint ? { endpoint: config.schedulerEndpoint } : {}) }));
  return {
    async put(scope, workflowId, schedules, previous) {
      const { ConflictException, CreateScheduleCommand, DeleteScheduleCommand, ResourceNotFoundException, UpdateScheduleCommand } = await sdk();
      const client = await made();
      for (const [index, schedule] of schedules.entries()) {
        const input = {
          Name: scheduleName(scope.tenantId, workflowId, index),
          GroupName: options.groupName,
          ScheduleExpression: awsCronOf(schedule.cron),
          ScheduleExpressionTimezone: schedule.timezone,
          FlexibleTimeWindow: { Mode: 'OFF' as const },
          State: schedule.enabled ? ('ENABLED' as const) : ('DISABLED' as const),
          Description: `Cairn workflow ${workflowId} (tenant ${scope.tenantId}), schedule ${index}`,
          Target: {
            Arn: options.queueArn,
            RoleArn: options.roleArn,
            Input: JSON.stringify({ type: 'scheduled', tenantId: scope.tenantId, workflowId, schedule: index, at: '<aws.scheduler.scheduled-time>' }),
            RetryPolicy: { MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 3600 },
          },
        };
        try {
          await client.send(new CreateScheduleCommand(input));
        } catch (error) {
          if (!(error instanceof ConflictException)) throw error;
          await client.send(new UpdateScheduleCommand(input));
        }
      }
      for (let index = schedules.length; index < previous; index++) {
        try {
          await client.send(new DeleteScheduleCommand({ Name: scheduleName(scope.tenantId, workflowId, index), GroupName: options.groupName }));
        } catch (error) {
          if (!(error instanceof ResourceNotFoundException)) throw error;
        }
      }
    },
  };
}

/** The stack's scheduler (SCHEDULE_GROUP_NAME, SCHEDULER_ROLE_ARN, WORKFLOW_QUEUE_ARN), or one that refuses schedules. */
export function schedulerFromConfig(): Scheduler {
  const { scheduleGroupName: groupName, schedulerRoleArn: roleArn, workflowQueueArn: queueArn } = config;
  return groupName && roleArn && queueArn ? eventBridgeScheduler({ groupName, roleArn, queueArn }) : unconfiguredScheduler;
}
