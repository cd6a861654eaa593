import { context, propagation, ROOT_CONTEXT, SpanStatusCode, trace, TraceFlags, type Context, type ContextManager } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { TraceStore, TraceView } from '../shared/runtime';
import { frameSlot, slotValue, withSlot } from '../shared/work-frame';

const REQUEST_ID = 'cairn.request.id';
const TENANT_ID = 'cairn.tenant.id';

/**
 * Local mode's traces: a span processor that keeps the most recent traces in memory, so that the
 * `X-Request-Id` of any response leads to its trace (`GET /v1/traces/{requestId}`). It keeps each
 * span as it ends: the SDK's SimpleSpanProcessor would hand it to an exporter through two promises
 * and a context switch per span, for an exporter that only stores it.
 */
class RecentTraces implements SpanProcessor, TraceStore {
  private readonly traces = new Map<string, ReadableSpan[]>();
  private readonly byRequest = new Map<string, string>();

  constructor(private readonly max: number) {}

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    const traceId = span.spanContext().traceId;
    const kept = this.traces.get(traceId) ?? [];
    if (kept.length === 0) {
      this.traces.set(traceId, kept);
      // Oldest first out: a Map iterates in insertion order.
      if (this.traces.size > this.max) {
        const [oldest] = this.traces.keys();
        this.traces.delete(oldest!);
      }
    }
    if (kept.length < 2000) kept.push(span);
    const requestId = span.attributes[REQUEST_ID];
    if (typeof requestId === 'string' && span.parentSpanContext === undefined) this.byRequest.set(requestId, traceId);
    if (this.byRequest.size > this.max * 2) for (const [requestId, traceId] of this.byRequest) if (!this.traces.has(traceId)) this.byRequest.delete(requestId);
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }

  byRequestId(requestId: string): TraceView | undefined {
    const traceId = this.byRequest.get(requestId);
    const spans = traceId ? this.traces.get(traceId) : undefined;
    if (!traceId || !spans) return undefined;
    const root = spans.find((s) => s.parentSpanContext === undefined);
    return {
      traceId,
      tenantId: typeof root?.attributes[TENANT_ID] === 'string' ? root.attributes[TENANT_ID] : undefined,
      spans: spans
        .map((s) => ({
          spanId: s.spanContext().spanId,
          parentSpanId: s.parentSpanContext?.spanId,
          name: s.name,
          startTime: new Date(s.startTime[0] * 1000 + s.startTime[1] / 1e6).toISOString(),
          durationMs: Math.round((s.duration[0] * 1000 + s.duration[1] / 1e6) * 1000) / 1000,
          status: s.status.code === SpanStatusCode.ERROR ? ('error' as const) : ('ok' as const),
          attributes: { ...s.attributes },
          ...(s.events.length > 0 ? { events: s.events.map((e) => ({ name: e.name, attributes: { ...e.attributes } })) } : {}),
        }))
        .sort((a, b) => (a.startTime < b.startTime ? -1 : a.startTime > b.startTime ? 1 : 0)),
    };
  }
}

/**
 * The trace context kept in the work's frame (shared/work-frame.ts) beside its log fields and
 * counters, rather than in a storage of its own as OpenTelemetry's AsyncLocalStorage manager
 * would: every storage costs on every promise. Functions bound to a context run in it; other
 * targets (event emitters) are returned as they are, which nothing here binds.
 */
const traceSlot = frameSlot<Context>('trace context');
class FrameContextManager implements ContextManager {
  active(): Context {
    return slotValue(traceSlot) ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return withSlot(traceSlot, ctx, () => fn.call(thisArg, ...args));
  }

  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const fn = target as (...args: unknown[]) => unknown;
    return ((...args: unknown[]) => this.with(ctx, fn, undefined, ...args)) as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    return this;
  }
}

const REGISTERED = Symbol.for('cairn.local-tracing');
type Registered = { recent: RecentTraces; provider: BasicTracerProvider };

/** Registers the process's tracer provider once (later calls get the same store). */
export function startLocalTracing(max = 1000): TraceStore {
  const global = globalThis as { [REGISTERED]?: Registered };
  if (global[REGISTERED]) return global[REGISTERED].recent;
  const recent = new RecentTraces(max);
  const provider = new BasicTracerProvider({ spanProcessors: [recent] });
  global[REGISTERED] = { recent, provider };
  setLocalTracing(true);
  return recent;
}

/** Turns the registered tracing off (every span a no-op) or on again: the benchmark's switch. */
export function setLocalTracing(on: boolean): void {
  const registered = (globalThis as { [REGISTERED]?: Registered })[REGISTERED];
  trace.disable();
  context.disable();
  propagation.disable();
  if (!on || !registered) return;
  context.setGlobalContextManager(new FrameContextManager());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(registered.provider);
}
