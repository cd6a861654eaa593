import { context, createContextKey, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';

/**
 * Tracing through the OpenTelemetry API only: with no SDK registered every span is a no-op (the
 * Lambda bundles carry the API alone); local mode registers one that keeps recent traces
 * (`local/tracing.ts`), and in AWS the ADOT layer registers its own and exports (the CDK's
 * `tracing` context flag). Span names and attributes follow the OpenTelemetry semantic
 * conventions (HTTP, GenAI); Cairn's own attributes start with `cairn.`.
 */
export { SpanKind };

const tracer = () => trace.getTracer('cairn');

const LABELS = createContextKey('cairn.span-labels');

/**
 * Runs `fn` with attributes every span started inside it carries besides its own (what an agent's
 * turn runs: its agent and version, on its model and tool spans).
 */
export function withSpanLabels<T>(labels: Attributes, fn: () => T): T {
  return context.with(context.active().setValue(LABELS, { ...(context.active().getValue(LABELS) as Attributes | undefined), ...labels }), fn);
}

const labelled = (attributes: Attributes | undefined): Attributes => ({ ...(context.active().getValue(LABELS) as Attributes | undefined), ...attributes });

/**
 * Runs `fn` in a new span (a child of the current one, or with `root` the start of a trace of its
 * own); a thrown error marks the span and goes on.
 */
export function inSpan<T>(name: string, options: { kind?: SpanKind; attributes?: Attributes; root?: boolean }, fn: (span: Span) => Promise<T>): Promise<T> {
  return tracer().startActiveSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: labelled(options.attributes), root: options.root ?? false }, async (span) => {
    let failure: unknown;
    try {
      return await fn(span);
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      endSpan(span, failure);
    }
  });
}

/** An event on the current span (what a guardrail found, say); nothing when no span is active. */
export function addSpanEvent(name: string, attributes: Attributes): void {
  trace.getActiveSpan()?.addEvent(name, attributes);
}

/** The current trace context, to travel with a queue message (W3C `traceparent`). */
export function traceCarrier(): Record<string, string> | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

/** Runs `fn` in the trace a message's carrier names, so its spans join the trace that sent it. */
export function withCarrier<T>(carrier: Record<string, string> | undefined, fn: () => T): T {
  return carrier ? context.with(propagation.extract(context.active(), carrier), fn) : fn();
}

/** A span the caller ends itself (a stream's lifetime): a child of the current span. */
export function startSpan(name: string, options: { kind?: SpanKind; attributes?: Attributes }): Span {
  return tracer().startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: labelled(options.attributes) });
}

/** Marks a span failed without ending it (an outcome reported, not thrown). */
export function markFailed(span: Span, message: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/** Ends a span, marking it failed when `error` is given. */
export function endSpan(span: Span, error?: unknown): void {
  if (error !== undefined) {
    span.recordException(error as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
  }
  span.end();
}
