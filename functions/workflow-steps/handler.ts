import { configuredRuntime } from '../../shared/configured-runtime';
import { sqsQueuesFromConfig } from '../../shared/queue/sqs-queue';
import { consumeStepMessage } from '../../shared/domain/workflow-execution';
import type { StepMessage } from '../../shared/queue/messages';
import { sqsHandler } from '../../shared/queue/sqs-handler';

const rt = configuredRuntime({ queues: sqsQueuesFromConfig() });
export const handler = sqsHandler<StepMessage>((message, delivery) => consumeStepMessage(rt, message, delivery));
