import { handle } from 'hono/aws-lambda';
import { blobsFromConfig } from '../../shared/blobs/s3-blobs';
import { configuredRuntime } from '../../shared/configured-runtime';
import { preloadIfConfigured } from '../../shared/load-once';
import { modelResolver } from '../../shared/models/resolve-model';
import { kmsSecretBoxFromConfig } from '../../shared/secrets/kms-secret-box';
import { sqsQueuesFromConfig } from '../../shared/queue/sqs-queue';
import { createKnowledgeSourcesApp } from './app';

export const handler = handle(createKnowledgeSourcesApp(configuredRuntime({ queues: sqsQueuesFromConfig(), secrets: kmsSecretBoxFromConfig(), blobs: blobsFromConfig(), models: modelResolver() })));
await preloadIfConfigured();
