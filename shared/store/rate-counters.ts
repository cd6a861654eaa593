import type { Clock } from '../clock';
import { ConditionalCheckFailedException, UpdateCommand } from './dynamo-commands';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { WindowLimits } from '../plans';
import type { TenantScope } from '../tenancy';
import type { Db } from './db';
import { keys } from './keys';

export interface WindowCounts {
  allowed: boolean;
  minute: number;
  hour: number;
}

/**
 * What a warm instance has taken from a key's counters ahead of need: `left` requests of the
 * minute `window`, the counters as they stood after the taking, and how many it took (`block`).
 */
interface Lease {
  window: number;
  left: number;
  minute: number;
  hour: number;
  block: number;
  takenAt: number;
}

/**
 * The largest block an instance takes at once: a hundredth of the minute limit, so a free key
 * (100 a minute) is counted one request at a time, exactly, and a busy enterprise key (10,000)
 * writes its counter about once per hundred requests instead of on every one.
 */
const blockLimit = (limits: WindowLimits) => Math.max(1, Math.floor(limits.minute / 100));

/** Bounded: past this many keys, an instance forgets those not seen this minute (their unused requests with them, and their refusals). */
const MAX_LEASES = 10_000;

/**
 * A refusal this instance saw, kept until its minute ends: a minute's count only grows, so a key
 * over its minute limit stays over it, and a spent hour gets requests back only from the next
 * minute's writes. Refused requests cost no write while it holds (a key hammering past its limit
 * would otherwise cost two conditional writes a request), and it holds for these limits only (a
 * plan that changed is asked again).
 */
interface Refusal {
  window: number;
  limits: WindowLimits;
  counts: WindowCounts;
}

export function rateCountersStore(db: Db, clock: Clock) {
  const leases = new Map<string, Lease>();
  const refusals = new Map<string, Refusal>();

  /**
   * Takes one request from both fixed windows at once, or none if either is spent. Both counters
   * live in one item per clock hour (minutes nest in hours), so a single conditional update is
   * atomic across every Lambda instance, and a rejected request consumes nothing.
   *
   * A key that keeps an instance busy takes requests in blocks: a block used up within a second
   * doubles the next (up to `blockLimit`), a slower one halves it. The counters count what was
   * taken, so no instance ever lets more through than the limits; an instance's unused share of a
   * minute is lost to the others when the minute ends (at most a block, a hundredth of the
   * limit), and given back to the hour in the same write that takes the next minute's block.
   */
  async function consumeRequest(
    scope: TenantScope,
    keyId: string,
    area: string,
    limits: WindowLimits,
    now = clock.now(),
  ): Promise<WindowCounts> {
    const window = Math.floor(now / 60_000);
    const leaseKey = `${scope.tenantId}\u0000${keyId}\u0000${area}`;
    const lease = leases.get(leaseKey);
    const leased = spareOf(lease, window);
    if (leased) return leased;
    const refused = refusals.get(leaseKey);
    if (refused && refused.window === window && refused.limits.minute === limits.minute && refused.limits.hour === limits.hour) return refused.counts;
    // Unused requests of this hour's earlier minute go back to the hour with the next write
    // (claimed now, so concurrent calls of this instance do not give them back twice).
    const giveBack = lease && lease.window !== window && Math.floor(lease.window / 60) === Math.floor(window / 60) ? lease.left : 0;
    if (lease) lease.left -= giveBack;
    const block = !lease ? 1 : Math.min(blockLimit(limits), now - lease.takenAt < 1000 ? lease.block * 2 : Math.max(1, Math.floor(lease.block / 2)));
    let taken: (WindowCounts & { block: number }) | undefined;
    try {
      taken = (await take(scope, keyId, area, limits, now, block, giveBack)) ?? (await take(scope, keyId, area, limits, now, 1, giveBack));
    } finally {
      // Not written: still this instance's to give back next time.
      if (lease && giveBack && !taken?.allowed) lease.left += giveBack;
    }
    if (!taken!.allowed) {
      // A concurrent call of this instance may have taken the last block meanwhile: its spare requests are this one's.
      const pooled = spareOf(leases.get(leaseKey), window);
      if (pooled) return pooled;
      const counts = { allowed: false, minute: taken!.minute, hour: taken!.hour };
      forgetOld(refusals, window);
      refusals.set(leaseKey, { window, limits: { minute: limits.minute, hour: limits.hour }, counts });
      return counts;
    }
    refusals.delete(leaseKey);
    // Requests taken in the same minute by concurrent calls of this instance pool together.
    const current = leases.get(leaseKey);
    const { minute, hour, block: size } = taken!;
    const left = (current && current.window === window ? current.left : 0) + size - 1;
    if (!leases.has(leaseKey)) forgetOld(leases, window);
    leases.set(leaseKey, { window, left, minute, hour, block: size, takenAt: now });
    return { allowed: true, minute: minute - left, hour: hour - left };
  }

  /**
   * One conditional update: `block` requests from both windows (less what is given back to the
   * hour), if they fit. A block that does not fit returns undefined, so the caller asks for one;
   * a single request that does not fit is refused, with the counters as they stood.
   */
  async function take(scope: TenantScope, keyId: string, area: string, limits: WindowLimits, now: number, block: number, giveBack: number): Promise<(WindowCounts & { block: number }) | undefined> {
    const hourStart = Math.floor(now / 3_600_000) * 3600;
    const minuteAttr = `m${Math.floor((now % 3_600_000) / 60_000)}`;
    try {
      const out = await db.client.send(
        new UpdateCommand({
          TableName: db.table,
          Key: keys.rateWindow(scope, keyId, area, hourStart),
          UpdateExpression: 'ADD #h :hourTaken, #m :block SET expiresAt = if_not_exists(expiresAt, :expires)',
          ConditionExpression:
            '(attribute_not_exists(#h) OR #h <= :hourRoom) AND (attribute_not_exists(#m) OR #m <= :minuteRoom)',
          ExpressionAttributeNames: { '#h': 'h', '#m': minuteAttr },
          ExpressionAttributeValues: {
            ':block': block,
            ':hourTaken': block - giveBack,
            ':hourRoom': limits.hour - block + giveBack,
            ':minuteRoom': limits.minute - block,
            // Kept a little past the hour so a late request never finds a missing item mid-hour.
            ':expires': hourStart + 3600 + 300,
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      const item = out.Attributes ?? {};
      return { allowed: true, minute: Number(item[minuteAttr] ?? block), hour: Number(item.h ?? block), block };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      if (block > 1) return undefined;
      // The store hands back the item as it stood, in wire format.
      const item = error.Item ? unmarshall(error.Item) : {};
      return { allowed: false, minute: Number(item[minuteAttr] ?? 0), hour: Number(item.h ?? 0), block };
    }
  }
  return { consumeRequest };
}

/** One request of a lease's spare ones in this minute, told its place in the windows as if counted one by one; undefined when it has none. */
function spareOf(lease: Lease | undefined, window: number): WindowCounts | undefined {
  if (!lease || lease.window !== window || lease.left <= 0) return undefined;
  lease.left--;
  return { allowed: true, minute: lease.minute - lease.left, hour: lease.hour - lease.left };
}

/** Bounded: past MAX_LEASES keys, an instance forgets those not seen this minute. */
function forgetOld(map: Map<string, { window: number }>, window: number): void {
  if (map.size >= MAX_LEASES) for (const [key, old] of map) if (old.window !== window) map.delete(key);
}

export type RateCountersStore = ReturnType<typeof rateCountersStore>;
