import { noBlobs } from './blobs/blobs';
import { noGateway } from './gateway';
import { noModels } from './models/types';
import { systemClock } from './clock';
import { runtimeCaches, type GivenPart, type Runtime, type RuntimeWith } from './runtime';
import { missingSecretBox } from './secrets/secret-box';
import { unconfiguredQueue } from './queue/queue';
import { createStore } from './store';
import { createDb } from './store/db';
import { unconfiguredScheduler } from './schedules/scheduler';
import { outboundPolicyFromConfig } from './net/outbound';

/**
 * A runtime from config: the store; model providers, queues, the secrets key, the platform secrets
 * and API Gateway only where given, so each Lambda bundles the clients it uses (e.g.
 * `configuredRuntime({ models: modelResolver(), queues: sqsQueuesFromConfig() })`) and a part a
 * function was not given fails naming what is missing. Local mode and tests give the parts they
 * make themselves.
 */
/** A runtime to read apps' routes with (their OpenAPI documents): nothing runs, so no part is needed. */
export const routesOnlyRuntime = (): RuntimeWith<GivenPart> => configuredRuntime() as RuntimeWith<GivenPart>;

export function configuredRuntime<G extends Partial<Runtime>>(given: G = {} as G): RuntimeWith<keyof G & GivenPart> {
  const clock = given.clock ?? systemClock;
  return {
    // Built only when not given: a store holds a DynamoDB client (local mode and tests give theirs).
    store: given.store ?? createStore(createDb(), clock),
    queues: { ingestion: unconfiguredQueue('INGESTION_QUEUE_URL'), workflowSteps: unconfiguredQueue('WORKFLOW_QUEUE_URL'), webhooks: unconfiguredQueue('WEBHOOK_QUEUE_URL') },
    blobs: noBlobs,
    secrets: missingSecretBox(),
    platformSecrets: async () => {
      throw new Error('No platform secrets in this function');
    },
    models: noModels,
    gateway: noGateway,
    clock,
    caches: runtimeCaches(clock),
    scheduler: unconfiguredScheduler,
    outbound: outboundPolicyFromConfig(),
    ...given,
  };
}
