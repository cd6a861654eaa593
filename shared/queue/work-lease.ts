import { config } from '../config';
import { errorFields, log } from '../log';
import { withHeartbeat } from './heartbeat';

/**
 * Work a delivery takes (a workflow step, a sync's planning) is leased for WORK_LEASE_SECONDS and
 * renewed every third of that while it runs, so a long step keeps its lease and a dead worker's
 * work is taken over soon after its last renewal, not after the longest a step could ever run.
 */
export function whileLeased<T>(renew: () => Promise<boolean>, work: () => Promise<T>): Promise<T> {
  const beat = () =>
    renew().then(
      () => undefined,
      (error: unknown) => log.warn('lease renewal failed', errorFields(error)),
    );
  return withHeartbeat(beat, Math.max(100, Math.floor(config.workLeaseMs / 3)), work);
}

/**
 * When a redelivered message finds its work leased by another delivery, it cannot tell a live
 * worker from a dead one yet: it comes back (a delayed copy) just after the lease would run out.
 */
export const checkBackSeconds = (leaseUntil: number, now: number) => Math.min(900, Math.max(1, Math.ceil((leaseUntil - now) / 1000) + 1));
