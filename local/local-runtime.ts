import { config } from '../shared/config';
import { configuredRuntime } from '../shared/configured-runtime';
import { handleIngestionMessage } from '../shared/domain/ingestion';
import { consumeStepMessage } from '../shared/domain/workflow-execution';
import { platformSecretsLoader, type PlatformSecrets } from '../shared/platform/platform-secrets';
import { localQueue, type LocalQueue } from '../shared/queue/local-queue';
import type { IngestionMessage, StepMessage } from '../shared/queue/messages';
import { sqsQueuesFromConfig } from '../shared/queue/sqs-queue';
import type { Runtime } from '../shared/runtime';
import { localKeyWrapper, secretBox } from '../shared/secrets/secret-box';
import { createStore } from '../shared/store';
import { modelResolver } from '../shared/models/resolve-model';
import type { Db } from '../shared/store/db';

export interface LocalRuntime {
  rt: Runtime;
  /** The in-process queues and their workers (absent where an SQS queue URL is configured). */
  ingestion?: LocalQueue<IngestionMessage>;
  workflowSteps?: LocalQueue<StepMessage>;
}

/**
 * Local mode's runtime (also the tests'): the given DynamoDB, a local secrets key, the given
 * platform secrets, and in-process queues whose workers run in this process (SQS queues where
 * their URLs are configured).
 */
export function localRuntime(parts: { db: Db; secretsKey: Buffer; platformSecrets?: PlatformSecrets }): LocalRuntime {
  const base = configuredRuntime({
    store: createStore(parts.db),
    models: modelResolver(),
    secrets: secretBox(localKeyWrapper(parts.secretsKey)),
    platformSecrets: platformSecretsLoader(parts.platformSecrets),
  });
  const ingestion = config.ingestionQueueUrl
    ? undefined
    : localQueue<IngestionMessage>('ingestion', (message, delivery) => handleIngestionMessage(rt, message, delivery));
  const workflowSteps = config.workflowQueueUrl
    ? undefined
    : localQueue<StepMessage>('workflow-steps', (message, delivery) => consumeStepMessage(rt, message, delivery), { concurrency: 4 });
  const sqs = ingestion && workflowSteps ? undefined : sqsQueuesFromConfig();
  const rt: Runtime = {
    ...base,
    queues: { ingestion: ingestion ?? sqs!.ingestion, workflowSteps: workflowSteps ?? sqs!.workflowSteps },
  };
  return { rt, ingestion, workflowSteps };
}
