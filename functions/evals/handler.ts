import { handle } from 'hono/aws-lambda';
import { configuredRuntime } from '../../shared/configured-runtime';
import { preloadIfConfigured } from '../../shared/load-once';
import { modelResolver } from '../../shared/models/resolve-model';
import { sqsQueuesFromConfig } from '../../shared/queue/sqs-queue';
import { createEvalsApp } from './app';

// A run's first cases go to the workflow-steps queue; a judge's model is checked when the run starts.
export const handler = handle(createEvalsApp(configuredRuntime({ models: modelResolver(), queues: sqsQueuesFromConfig() })));
await preloadIfConfigured();
