import { kmsSecretBoxFromConfig } from '../../shared/secrets/kms-secret-box';
import { handle } from 'hono/aws-lambda';
import { configuredRuntime } from '../../shared/configured-runtime';
import { sqsQueuesFromConfig } from '../../shared/queue/sqs-queue';
import { createWorkflowsApp } from './app';

// http and tool steps' auth is sealed when a workflow is written.
export const handler = handle(createWorkflowsApp(configuredRuntime({ queues: sqsQueuesFromConfig(), secrets: kmsSecretBoxFromConfig() })));
