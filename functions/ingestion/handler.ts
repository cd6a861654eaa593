import { blobsFromConfig } from '../../shared/blobs/s3-blobs';
import { configuredRuntime } from '../../shared/configured-runtime';
import { modelResolver } from '../../shared/models/resolve-model';
import { kmsSecretBoxFromConfig } from '../../shared/secrets/kms-secret-box';
import { sqsQueuesFromConfig } from '../../shared/queue/sqs-queue';
import { handleIngestionMessage } from '../../shared/knowledge';
import type { IngestionMessage } from '../../shared/queue/messages';
import { sqsHandler } from '../../shared/queue/sqs-handler';

const rt = configuredRuntime({ queues: sqsQueuesFromConfig(), secrets: kmsSecretBoxFromConfig(), blobs: blobsFromConfig(), models: modelResolver() });
export const handler = sqsHandler<IngestionMessage>((message, delivery) => handleIngestionMessage(rt, message, delivery));
