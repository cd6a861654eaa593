import { kmsSecretBoxFromConfig } from '../../shared/secrets/kms-secret-box';
import { codeRunnerFromConfig } from '../../shared/code/code-runner-from-config';
import { configuredRuntime } from '../../shared/configured-runtime';
import { onFirstUse, preloadIfConfigured } from '../../shared/load-once';
import { modelResolver } from '../../shared/models/resolve-model';
import { sqsQueuesFromConfig } from '../../shared/queue/sqs-queue';
import { consumeStepsMessage } from '../../shared/steps-queue';
import type { StepsQueueMessage } from '../../shared/queue/messages';
import { sqsHandler } from '../../shared/queue/sqs-handler';
import type { AgentRuns, AgentTurn } from '../../shared/runtime';

// Agent steps converse with agents (whose tools may run workflows): the turn is given here, its
// code loaded with the first agent step.
const agents = onFirstUse(() => import('../../shared/agent-turn'));
const agentTurn: AgentTurn = async (...args) => (await agents()).agentTurn(...args);
const agentRuns: AgentRuns = {
  start: async (...args) => (await agents()).agentRuns.start(...args),
  state: async (...args) => (await agents()).agentRuns.state(...args),
  cancel: async (...args) => (await agents()).agentRuns.cancel(...args),
};
const rt = configuredRuntime({ models: modelResolver(), queues: sqsQueuesFromConfig(), secrets: kmsSecretBoxFromConfig(), agentTurn, agentRuns, code: codeRunnerFromConfig() });
// Evaluation cases travel on the same queue: they run agent turns too.
export const handler = sqsHandler<StepsQueueMessage>((message, delivery) => consumeStepsMessage(rt, message, delivery));
await preloadIfConfigured();
