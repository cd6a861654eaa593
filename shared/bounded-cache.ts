import type { Clock } from './clock';

/**
 * A per-instance cache with a bound on its entries (the oldest written goes first) and, when given,
 * a time to live read from the runtime's clock. The runtime holds one per use, so nothing is cached
 * in a module and a test that builds its own runtime starts empty.
 */
export class BoundedCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly maxEntries: number,
    private readonly ttlMs = Number.POSITIVE_INFINITY,
  ) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expires > this.clock.now()) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  /** Forgets a key (this instance changed what it held). */
  forget(key: string): void {
    this.entries.delete(key);
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, expires: this.clock.now() + this.ttlMs });
  }
}
