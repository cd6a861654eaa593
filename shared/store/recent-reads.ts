import { BoundedCache } from '../bounded-cache';

/**
 * How old a read the hot paths may take: a search's source and live segments, a turn's or run's
 * draft. Within this time another instance's write reaches them, about as long as an eventually
 * consistent read of DynamoDB may already lag; this instance's own writes are seen at once.
 */
export const RECENT_MS = 1000;

/** Time to live is measured on the process's monotonic clock, not the runtime's (a test's fixed clock would keep entries forever). */
const monotonic = { now: () => performance.now() };

/**
 * What this instance read within `RECENT_MS`, by key, for the callers that may take a read that
 * old (the others read the store each time). The owner forgets a key when this instance writes
 * it; a read that was under way during any such write is not kept, so it cannot bring back what
 * the write replaced.
 */
export function recentReads<V>(maxEntries: number) {
  const kept = new BoundedCache<V>(monotonic, maxEntries, RECENT_MS);
  let writes = 0;
  const forget = (key: string): void => {
    writes++;
    kept.forget(key);
  };
  return {
    /** `load`'s value, or what it gave within `RECENT_MS`; kept only when `keep` says so. */
    async read(key: string, load: () => Promise<V | undefined>, keep: (value: V) => boolean = () => true): Promise<V | undefined> {
      const hit = kept.get(key);
      if (hit !== undefined) return hit;
      const before = writes;
      const value = await load();
      if (value !== undefined && writes === before && keep(value)) kept.set(key, value);
      return value;
    },

    /** This instance wrote the key (call once the write is done, whatever its outcome). */
    forget,

    /** Runs a write of the key, then forgets it (whatever the write's outcome). */
    async writing<R>(key: string, write: () => Promise<R>): Promise<R> {
      try {
        return await write();
      } finally {
        forget(key);
      }
    },
  };
}
