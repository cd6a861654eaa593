import { handle } from 'hono/aws-lambda';
import { configuredRuntime } from '../../shared/configured-runtime';
import { sqsQueuesFromConfig } from '../../shared/queue/sqs-queue';
import { createWorkflowsApp } from './app';

export const handler = handle(createWorkflowsApp(configuredRuntime({ queues: sqsQueuesFromConfig() })));
