import { config } from '../shared/config';
import { blobsFromConfig } from '../shared/blobs/s3-blobs';
import type { Blobs } from '../shared/blobs/blobs';
import { startLocalTracing } from './tracing';
import { configuredRuntime } from '../shared/configured-runtime';
import { handleIngestionMessage } from '../shared/knowledge';
import { agentRuns, agentTurn } from '../shared/agents';
import { localCodeRunner } from '../shared/code/local-code-runner';
import { deliverWebhook, tickSchedules, nextRunOf } from '../shared/workflows';
import { consumeStepsMessage } from '../shared/steps-queue';
import { storedScheduler } from '../shared/schedules/scheduler';
import { sweep } from '../shared/work-sweeper';
import { errorFields, log } from '../shared/log';
import { platformSecretsLoader, type PlatformSecrets } from '../shared/platform/platform-secrets';
import type { IngestionMessage, StepsQueueMessage, WebhookMessage } from '../shared/queue/messages';
import { sqsQueuesFromConfig } from '../shared/queue/sqs-queue';
import { storedQueue, type StoredQueue } from '../shared/queue/stored-queue';
import { systemClock, type Clock } from '../shared/clock';
import type { GivenPart, RuntimeWith } from '../shared/runtime';
import { noGateway } from '../shared/gateway';
import { outboundPolicyFromConfig } from '../shared/net/outbound';
import { localKeyWrapper, secretBox } from '../shared/secrets/secret-box';
import { createStore } from '../shared/store';
import { modelResolver } from '../shared/models/resolve-model';
import type { ModelResolver } from '../shared/models/types';
import type { Db } from '../shared/store/db';

export interface LocalRuntime {
  rt: RuntimeWith<GivenPart>;
  /** The queues stored in the table and their workers in this process (absent where an SQS queue URL is configured). */
  ingestion?: StoredQueue<IngestionMessage>;
  workflowSteps?: StoredQueue<StepsQueueMessage>;
  webhooks?: StoredQueue<WebhookMessage>;
  /**
   * Starts the workers; `releaseTaken` when this process alone serves the data (local mode's own
   * DynamoDB); `sweepEveryMs` runs the sweeper that often, `scheduleEveryMs` the schedules' ticker
   * (the server; tests sweep and tick when they choose).
   */
  start(options?: { releaseTaken?: boolean; sweepEveryMs?: number; scheduleEveryMs?: number }): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Local mode's runtime (also the tests'): the given DynamoDB, a local secrets key, the given
 * platform secrets, and queues stored in the table whose workers run in this process (SQS queues
 * where their URLs are configured). `queueNamespace` keeps the queues of runtimes sharing one
 * table apart (each test file has its own).
 */
export function localRuntime(parts: { db: Db; secretsKey: Buffer; platformSecrets?: PlatformSecrets; queueNamespace?: string; blobs?: Blobs; clock?: Clock; ownServices?: string[]; models?: ModelResolver }): LocalRuntime {
  const clock = parts.clock ?? systemClock;
  const store = createStore(parts.db, clock);
  const namespace = parts.queueNamespace ?? 'local';
  const visibilityMs = config.workLeaseMs;
  const ingestion = config.ingestionQueueUrl
    ? undefined
    : storedQueue<IngestionMessage>(store.queueMessages, { namespace, name: 'ingestion' }, (message, delivery) => handleIngestionMessage(rt, message, delivery), { visibilityMs });
  const workflowSteps = config.workflowQueueUrl
    ? undefined
    : storedQueue<StepsQueueMessage>(store.queueMessages, { namespace, name: 'workflow-steps' }, (message, delivery) => consumeStepsMessage(rt, message, delivery), { visibilityMs, concurrency: 4 });
  const webhooks = config.webhookQueueUrl
    ? undefined
    : storedQueue<WebhookMessage>(store.queueMessages, { namespace, name: 'webhooks' }, (message, delivery) => deliverWebhook(rt, message, delivery), { visibilityMs, concurrency: 4 });
  const sqs = ingestion && workflowSteps && webhooks ? undefined : sqsQueuesFromConfig();
  // Every part: local mode runs every function (API Gateway's part is a no-op here: no usage plans).
  const rt: RuntimeWith<GivenPart> = configuredRuntime({
    store,
    models: parts.models ?? modelResolver(),
    blobs: parts.blobs ?? blobsFromConfig(),
    secrets: secretBox(localKeyWrapper(parts.secretsKey)),
    platformSecrets: platformSecretsLoader(parts.platformSecrets),
    traces: startLocalTracing(),
    agentTurn,
    agentRuns,
    code: localCodeRunner,
    clock,
    scheduler: storedScheduler(store, nextRunOf, () => clock.now()),
    gateway: noGateway,
    outbound: outboundPolicyFromConfig(parts.ownServices),
    queues: { ingestion: ingestion ?? sqs!.ingestion, workflowSteps: workflowSteps ?? sqs!.workflowSteps, webhooks: webhooks ?? sqs!.webhooks },
  });
  const workers = [ingestion, workflowSteps, webhooks].filter((q) => q !== undefined);
  let sweeper: NodeJS.Timeout | undefined;
  let scheduler: NodeJS.Timeout | undefined;
  return {
    rt,
    ingestion,
    workflowSteps,
    webhooks,
    start: async (options = {}) => {
      await Promise.all(workers.map((q) => q.start(options)));
      if (options.scheduleEveryMs) {
        let ticking = false;
        scheduler = setInterval(() => {
          if (ticking) return;
          ticking = true;
          tickSchedules(rt, rt.clock.now())
            .catch((error: unknown) => log.error('schedules tick failed', errorFields(error)))
            .finally(() => (ticking = false));
        }, options.scheduleEveryMs);
        scheduler.unref();
      }
      if (options.sweepEveryMs) {
        let sweeping = false;
        sweeper = setInterval(() => {
          if (sweeping) return;
          sweeping = true;
          sweep(rt)
            .catch((error: unknown) => log.error('sweep failed', errorFields(error)))
            .finally(() => (sweeping = false));
        }, options.sweepEveryMs);
        sweeper.unref();
      }
    },
    stop: async () => {
      clearInterval(sweeper);
      clearInterval(scheduler);
      await Promise.all(workers.map((q) => q.stop()));
    },
  };
}
