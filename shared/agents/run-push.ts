import { StreamResponse } from '@a2a-js/sdk';
import type { Runtime } from '../runtime';
import type { RunRecord } from '../store/runs';
import type { TenantScope } from '../tenancy';
import { queueDelivery } from '../workflows';
import { taskOf } from './run-task';

/**
 * A run's change pushed to where its client asked (A2A push notification configs): the task as
 * it stands, as a StreamResponse, once per change and target. Each push is a delivery of the
 * webhook queue: retried with backoff, through the outbound guard, its attempts recorded.
 */
export async function pushRunChange(rt: Runtime, scope: TenantScope, run: RunRecord): Promise<void> {
  if (!run.push?.length) return;
  const body = JSON.stringify(StreamResponse.toJSON({ payload: { $case: 'task', value: taskOf(run) } }));
  const createdAt = new Date(rt.clock.now()).toISOString();
  for (const target of run.push) {
    const key = `push.${target.id}.${run.seq}`;
    await queueDelivery(rt, scope, { id: run.id, workflowId: '-' }, { id: `${run.id}.${key}`, key, event: `task.${run.status}`, url: target.url, status: 'pending', attempt: 0, attempts: [], createdAt, body, ...(target.sealed ? { sealed: target.sealed } : {}), style: 'a2a' });
  }
}
