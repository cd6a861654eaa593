/**
 * Time, passed in (the runtime's `clock`, and the store's) so that code reading it can be tested
 * without waiting, and a test freezes or moves it through the runtime instead of spying on Date.
 * Durations are measured with `performance.now()`, which no clock setting should move.
 */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** The clock's time as ISO-8601 UTC (records' createdAt, updatedAt, …). */
export const isoNow = (clock: Clock): string => new Date(clock.now()).toISOString();
