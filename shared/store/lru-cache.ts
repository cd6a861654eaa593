/**
 * A least-recently-used map bounded by the bytes its values hold (as the caller sizes them):
 * the search index's immutable items, kept between requests of one process (a Lambda instance,
 * the local server).
 */
export interface LruCache<V> {
  get(key: string): V | undefined;
  set(key: string, value: V, bytes: number): void;
  readonly bytes: number;
}

export function lruCache<V>(maxBytes: number): LruCache<V> {
  // A Map iterates in insertion order: re-inserting on use keeps the least recent first.
  const entries = new Map<string, { value: V; bytes: number }>();
  let total = 0;
  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      entries.delete(key);
      entries.set(key, entry);
      return entry.value;
    },
    set(key, value, bytes) {
      const old = entries.get(key);
      if (old) {
        total -= old.bytes;
        entries.delete(key);
      }
      if (bytes > maxBytes) return;
      entries.set(key, { value, bytes });
      total += bytes;
      for (const [oldest, entry] of entries) {
        if (total <= maxBytes) break;
        entries.delete(oldest);
        total -= entry.bytes;
      }
    },
    get bytes() {
      return total;
    },
  };
}
