import { onFirstUse } from './load-once';
import type { StepsQueueMessage } from './queue/messages';
import type { Delivery } from './queue/queue';
import type { RuntimeWith } from './runtime';

// Each kind of work loads with its first message: a worker that only runs workflows never loads evaluations.
const evals = onFirstUse(() => import('./eval-work'));
const workflows = onFirstUse(() => import('./workflow-work'));

/**
 * What the steps queue's worker does with a message: workflow work (steps, due schedules) or an
 * evaluation case. One dispatch for the Lambda worker and local mode.
 */
export async function consumeStepsMessage(rt: RuntimeWith<'models' | 'queues' | 'secrets' | 'agentTurn'>, message: StepsQueueMessage, delivery: Delivery): Promise<void> {
  if (message.type === 'eval-case') return (await evals()).consumeEvalCase(rt, message, delivery);
  return (await workflows()).consumeWorkflowMessage(rt, message, delivery);
}
