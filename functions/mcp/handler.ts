import { handle } from 'hono/aws-lambda';
import { codeRunnerFromConfig } from '../../shared/code/code-runner-from-config';
import { configuredRuntime } from '../../shared/configured-runtime';
import { preloadIfConfigured } from '../../shared/load-once';
import { modelResolver } from '../../shared/models/resolve-model';
import { sqsQueuesFromConfig } from '../../shared/queue/sqs-queue';
import { kmsSecretBoxFromConfig } from '../../shared/secrets/kms-secret-box';
import { createMcpApp } from './app';

// Asking an agent calls models and its tools (sealed auth, workflow tools); run_workflow sends steps.
export const handler = handle(createMcpApp(configuredRuntime({ models: modelResolver(), secrets: kmsSecretBoxFromConfig(), queues: sqsQueuesFromConfig(), code: codeRunnerFromConfig() })));
await preloadIfConfigured();
