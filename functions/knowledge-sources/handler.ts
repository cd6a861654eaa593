import { handle } from 'hono/aws-lambda';
import { blobsFromConfig } from '../../shared/blobs/s3-blobs';
import { config } from '../../shared/config';
import { configuredRuntime } from '../../shared/configured-runtime';
import { preloadAll } from '../../shared/load-once';
import { modelResolver } from '../../shared/models/resolve-model';
import { kmsSecretBoxFromConfig } from '../../shared/secrets/kms-secret-box';
import { sqsQueuesFromConfig } from '../../shared/queue/sqs-queue';
import { createKnowledgeSourcesApp } from './app';

export const handler = handle(createKnowledgeSourcesApp(configuredRuntime({ queues: sqsQueuesFromConfig(), secrets: kmsSecretBoxFromConfig(), blobs: blobsFromConfig(), models: modelResolver() })));
if (config.preload) await preloadAll();
