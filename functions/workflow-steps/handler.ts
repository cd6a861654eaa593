import { kmsSecretBoxFromConfig } from '../../shared/secrets/kms-secret-box';
import { agentTurn } from '../../shared/agents';
import { configuredRuntime } from '../../shared/configured-runtime';
import { modelResolver } from '../../shared/models/resolve-model';
import { sqsQueuesFromConfig } from '../../shared/queue/sqs-queue';
import { consumeStepsMessage } from '../../shared/steps-queue';
import type { StepsQueueMessage } from '../../shared/queue/messages';
import { sqsHandler } from '../../shared/queue/sqs-handler';

// Agent steps converse with agents (whose tools may run workflows): the turn is given here.
const rt = configuredRuntime({ models: modelResolver(), queues: sqsQueuesFromConfig(), secrets: kmsSecretBoxFromConfig(), agentTurn });
// Evaluation cases travel on the same queue: they run agent turns too.
export const handler = sqsHandler<StepsQueueMessage>((message, delivery) => consumeStepsMessage(rt, message, delivery));
