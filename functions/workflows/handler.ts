import { schedulerFromConfig } from '../../shared/schedules/eventbridge-scheduler';
import { kmsSecretBoxFromConfig } from '../../shared/secrets/kms-secret-box';
import { streamHandle } from 'hono/aws-lambda';
import { codeRunnerFromConfig } from '../../shared/code/code-runner-from-config';
import { configuredRuntime } from '../../shared/configured-runtime';
import { preloadIfConfigured } from '../../shared/load-once';
import { sqsQueuesFromConfig } from '../../shared/queue/sqs-queue';
import { createWorkflowsApp } from './app';

// Response streaming: execution events are server-sent events; every other answer streams in one
// piece. http and tool steps' auth is sealed when a workflow is written.
export const handler = streamHandle(createWorkflowsApp(configuredRuntime({ scheduler: schedulerFromConfig(), queues: sqsQueuesFromConfig(), secrets: kmsSecretBoxFromConfig(), code: codeRunnerFromConfig() })));
await preloadIfConfigured();
