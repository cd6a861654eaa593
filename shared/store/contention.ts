/**
 * Writers that lose a conditional write to another (a record's version, a release's number) read
 * again and retry. Each round only one of a burst wins, so retrying at once makes the rest lose
 * again together; a full-jitter backoff spreads them out. With `CONTENDED_ATTEMPTS` rounds a burst
 * of a dozen writers all get through (about 8 s at worst), and past that the caller answers 409.
 */
export const CONTENDED_ATTEMPTS = 12;

/** Waits before the next round after losing round `attempt` (1-based): up to 40 ms, doubling, at most 1 s. */
export const backOff = (attempt: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.random() * Math.min(1000, 20 * 2 ** attempt)));
