import { configuredRuntime } from '../../shared/configured-runtime';
import { deliverWebhook } from '../../shared/workflows';
import type { WebhookMessage } from '../../shared/queue/messages';
import { sqsHandler } from '../../shared/queue/sqs-handler';
import { sqsQueuesFromConfig } from '../../shared/queue/sqs-queue';
import { kmsSecretBoxFromConfig } from '../../shared/secrets/kms-secret-box';

// Opens each webhook's sealed secret to sign; re-sends a failed delivery to its queue with a delay.
const rt = configuredRuntime({ queues: sqsQueuesFromConfig(), secrets: kmsSecretBoxFromConfig() });
export const handler = sqsHandler<WebhookMessage>((message, delivery) => deliverWebhook(rt, message, delivery));
