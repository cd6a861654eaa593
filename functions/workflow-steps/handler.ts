import { configuredRuntime } from '../../shared/configured-runtime';
import { modelResolver } from '../../shared/models/resolve-model';
import { sqsQueuesFromConfig } from '../../shared/queue/sqs-queue';
import { consumeStepMessage } from '../../shared/domain/workflow-execution';
import type { StepMessage } from '../../shared/queue/messages';
import { sqsHandler } from '../../shared/queue/sqs-handler';

const rt = configuredRuntime({ models: modelResolver(), queues: sqsQueuesFromConfig() });
export const handler = sqsHandler<StepMessage>((message, delivery) => consumeStepMessage(rt, message, delivery));
