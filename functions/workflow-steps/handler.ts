import { kmsSecretBoxFromConfig } from '../../shared/secrets/kms-secret-box';
import { agentTurn } from '../../shared/agents';
import { configuredRuntime } from '../../shared/configured-runtime';
import { modelResolver } from '../../shared/models/resolve-model';
import { sqsQueuesFromConfig } from '../../shared/queue/sqs-queue';
import { consumeWorkflowMessage } from '../../shared/workflows';
import type { WorkflowMessage } from '../../shared/queue/messages';
import { sqsHandler } from '../../shared/queue/sqs-handler';

// Agent steps converse with agents (whose tools may run workflows): the turn is given here.
const rt = configuredRuntime({ models: modelResolver(), queues: sqsQueuesFromConfig(), secrets: kmsSecretBoxFromConfig(), agentTurn });
export const handler = sqsHandler<WorkflowMessage>((message, delivery) => consumeWorkflowMessage(rt, message, delivery));
