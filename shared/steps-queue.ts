import { onFirstUse } from './load-once';
import type { StepsQueueMessage } from './queue/messages';
import type { Delivery } from './queue/queue';
import type { RuntimeWith } from './runtime';

// Each kind of work loads with its first message: a worker that only runs workflows never loads evaluations.
const evals = onFirstUse(() => import('./eval-work'));
const workflows = onFirstUse(() => import('./workflow-work'));
const memory = onFirstUse(() => import('./memory-work'));
const runs = onFirstUse(() => import('./run-work'));

/**
 * What the steps queue's worker does with a message: workflow work (steps, due schedules), an
 * evaluation case or an agent turn's memory. One dispatch for the Lambda worker and local mode.
 */
export async function consumeStepsMessage(rt: RuntimeWith<'models' | 'queues' | 'secrets' | 'agentTurn' | 'agentRuns' | 'code'>, message: StepsQueueMessage, delivery: Delivery): Promise<void> {
  if (message.type === 'eval-case') return (await evals()).consumeEvalCase(rt, message, delivery);
  if (message.type === 'memory') return (await memory()).consumeMemoryMessage(rt, message, delivery);
  if (message.type === 'run') return (await runs()).consumeRunMessage(rt, message, delivery);
  return (await workflows()).consumeWorkflowMessage(rt, message, delivery);
}
