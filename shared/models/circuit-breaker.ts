import type { Clock } from '../clock';
import { emitMetrics } from '../metrics';

/**
 * A circuit breaker per model (`provider/model`), per warm instance. Closed, it counts failures
 * (429s, 5xx, time-outs, lost connections); `FAILURES` of them within `WINDOW_MS` open it, and an
 * open model is skipped for `COOL_DOWN_MS`. Then it is half-open: one request is let through, and
 * its outcome closes the circuit or opens it for another cool-down. A provider's `Retry-After`
 * opens it at once until then (never for more than `MAX_WAIT_MS`), so a throttled model is not
 * called again before it said to.
 */
export const BREAKER = { FAILURES: 5, WINDOW_MS: 30_000, COOL_DOWN_MS: 30_000, MAX_WAIT_MS: 600_000 } as const;

type State = { failures: number[]; openUntil?: number; probing?: boolean };

export interface BreakerView {
  model: string;
  state: 'closed' | 'open' | 'half_open';
  /** Failures within the window (closed). */
  recentFailures: number;
  /** When an open circuit lets a request through again. */
  openUntil?: string;
}

export class CircuitBreakers {
  private readonly states = new Map<string, State>();

  constructor(
    private readonly clock: Clock,
    /** Models tracked at most (the least recently failed go first). */
    private readonly capacity = 500,
  ) {}

  /** Whether a call to the model may go ahead now (a half-open circuit admits one at a time). */
  admit(model: string): boolean {
    const state = this.states.get(model);
    if (!state?.openUntil) return true;
    if (this.clock.now() < state.openUntil || state.probing) return false;
    state.probing = true;
    return true;
  }

  succeeded(model: string): void {
    const state = this.states.get(model);
    if (!state) return;
    this.states.delete(model);
    if (state.openUntil) emitMetrics({ model }, { CircuitOpen: { value: 0, unit: 'count' } });
  }

  /** A call admitted that ended neither way (its caller went away): a half-open circuit admits the next. */
  released(model: string): void {
    const state = this.states.get(model);
    if (state) state.probing = false;
  }

  /** A failure that a chain falls back on; `retryAfterSeconds` from the provider's Retry-After. */
  failed(model: string, retryAfterSeconds?: number): void {
    const now = this.clock.now();
    const state = this.states.get(model) ?? { failures: [] };
    this.states.delete(model); // re-inserted last: the Map's order is the least recently failed first
    this.states.set(model, state);
    if (this.states.size > this.capacity) this.states.delete(this.states.keys().next().value!);
    state.failures = [...state.failures.filter((t) => t > now - BREAKER.WINDOW_MS), now];
    const wasOpen = state.openUntil !== undefined;
    const waitMs = retryAfterSeconds !== undefined ? Math.min(retryAfterSeconds * 1000, BREAKER.MAX_WAIT_MS) : undefined;
    if (state.probing || state.failures.length >= BREAKER.FAILURES || waitMs) {
      state.openUntil = now + Math.max(waitMs ?? 0, state.probing || state.failures.length >= BREAKER.FAILURES ? BREAKER.COOL_DOWN_MS : 0);
      state.probing = false;
      if (!wasOpen) emitMetrics({ model }, { CircuitOpen: { value: 1, unit: 'count' } });
    }
  }

  /** Every model with a failure or an open circuit, as the platform admin sees them. */
  view(): BreakerView[] {
    const now = this.clock.now();
    return [...this.states.entries()].map(([model, s]) => ({
      model,
      state: !s.openUntil ? 'closed' : now < s.openUntil ? 'open' : 'half_open',
      recentFailures: s.failures.filter((t) => t > now - BREAKER.WINDOW_MS).length,
      ...(s.openUntil ? { openUntil: new Date(s.openUntil).toISOString() } : {}),
    }));
  }
}
