import { consumeStepMessage } from '../../shared/domain/workflow-execution';
import { sqsHandler } from '../../shared/queue/sqs-handler';

export const handler = sqsHandler(consumeStepMessage);
