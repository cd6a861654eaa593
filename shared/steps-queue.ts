import { consumeEvalCase } from './evals';
import type { StepsQueueMessage } from './queue/messages';
import type { Delivery } from './queue/queue';
import type { RuntimeWith } from './runtime';
import { consumeWorkflowMessage } from './workflows';

/**
 * What the steps queue's worker does with a message: workflow work (steps, due schedules) or an
 * evaluation case. One dispatch for the Lambda worker and local mode.
 */
export function consumeStepsMessage(rt: RuntimeWith<'models' | 'queues' | 'secrets' | 'agentTurn'>, message: StepsQueueMessage, delivery: Delivery): Promise<void> {
  return message.type === 'eval-case' ? consumeEvalCase(rt, message, delivery) : consumeWorkflowMessage(rt, message, delivery);
}
