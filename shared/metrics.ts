import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { config } from './config';

/**
 * CloudWatch metrics as Embedded Metric Format log lines (Powertools Metrics): CloudWatch turns the
 * function's log lines into metrics, with no call on the request's path. Every metric carries the
 * function's `service` dimension; `dimensions` add one more set (route, model, tool kind), none
 * gives totals by service that an alarm can watch without knowing every route or model. Each call
 * is its own document, so concurrent requests in one process never mix their dimensions. Off
 * outside Lambda unless METRICS=emf.
 */
export type MetricValues = Record<string, { value: number; unit: 'count' | 'ms' }>;

const UNITS = { count: MetricUnit.Count, ms: MetricUnit.Milliseconds } as const;

let shared: Metrics | undefined;

export function emitMetrics(dimensions: Record<string, string>, values: MetricValues): void {
  if (config.metrics !== 'emf') return;
  // One instance, reused: each call adds, publishes and clears its metrics and dimensions in one
  // synchronous run, so no other call's can mix in (making a Metrics per call cost 0.036 ms of
  // CPU, some 8% of a GET).
  const metrics = (shared ??= new Metrics({ namespace: config.metricsNamespace, serviceName: config.serviceName }));
  if (Object.keys(dimensions).length > 0) metrics.addDimensions(dimensions);
  for (const [name, { value, unit }] of Object.entries(values)) metrics.addMetric(name, UNITS[unit], value);
  metrics.publishStoredMetrics();
}
