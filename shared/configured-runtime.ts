import { noGateway } from './gateway-keys';
import { modelResolver } from './models/resolve-model';
import { platformSecretsLoader } from './platform/platform-secrets';
import { systemClock, type Runtime } from './runtime';
import { missingSecretBox } from './secrets/secret-box';
import { unconfiguredQueue } from './queue/queue';
import { createStore } from './store';
import { createDb } from './store/db';

/**
 * A runtime from config: the store, the model providers and the platform secrets; queues, the
 * secrets key and API Gateway only where given, so each Lambda bundles the clients it uses
 * (e.g. `configuredRuntime({ queues: sqsQueuesFromConfig() })`). Local mode and tests give the
 * parts they make themselves.
 */
export function configuredRuntime(given: Partial<Runtime> = {}): Runtime {
  return {
    store: createStore(createDb()),
    queues: { ingestion: unconfiguredQueue('INGESTION_QUEUE_URL'), workflowSteps: unconfiguredQueue('WORKFLOW_QUEUE_URL') },
    secrets: missingSecretBox(),
    platformSecrets: platformSecretsLoader(),
    models: modelResolver(),
    gateway: noGateway,
    clock: systemClock,
    ...given,
  };
}
