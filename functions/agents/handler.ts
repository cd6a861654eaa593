import { streamHandle } from 'hono/aws-lambda';
import { codeRunnerFromConfig } from '../../shared/code/code-runner-from-config';
import { configuredRuntime } from '../../shared/configured-runtime';
import { preloadIfConfigured } from '../../shared/load-once';
import { modelResolver } from '../../shared/models/resolve-model';
import { sqsQueuesFromConfig } from '../../shared/queue/sqs-queue';
import { kmsSecretBoxFromConfig } from '../../shared/secrets/kms-secret-box';
import { createAgentsApp } from './app';

// Response streaming (API Gateway REST, STREAM transfer mode): converse and chat completions
// stream their server-sent events; every other answer is streamed in one piece. Agents' tools need
// the secret box (sealed auth) and the workflow queue (workflow tools).
export const handler = streamHandle(createAgentsApp(configuredRuntime({ models: modelResolver(), secrets: kmsSecretBoxFromConfig(), queues: sqsQueuesFromConfig(), code: codeRunnerFromConfig() })));
await preloadIfConfigured();
