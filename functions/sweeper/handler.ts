import type { ScheduledEvent } from 'aws-lambda';
import { configuredRuntime } from '../../shared/configured-runtime';
import { preloadIfConfigured } from '../../shared/load-once';
import { sweep } from '../../shared/work-sweeper';
import { log } from '../../shared/log';
import { sqsQueuesFromConfig } from '../../shared/queue/sqs-queue';

const rt = configuredRuntime({ queues: sqsQueuesFromConfig() });

/** Runs on a schedule (EventBridge): one pass of the sweeper over the unfinished work. */
export const handler = async (_event: ScheduledEvent): Promise<void> => {
  const report = await sweep(rt);
  log.info('sweep done', { checked: report.checked, ...report.outcomes });
};
await preloadIfConfigured();
