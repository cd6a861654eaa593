import { Duration } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { AlarmStatusWidget, Dashboard, GraphWidget, MathExpression, Metric, Stats, type Alarm, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { alarmAt } from './alarm';
import { metricsNamespaceOf } from './metrics-names';
import type { WorkQueue } from './work-queue';

/** Thresholds, each a context value: `cdk deploy -c p99LatencyMs=5000`. */
const THRESHOLDS = {
  /** Percent of API answers that are 5xx over 5 minutes (with at least 20 requests), twice in a row. */
  serverErrorPercent: 5,
  /** API Gateway's p99 latency, 5 minutes, three times in a row (model-backed turns take seconds). */
  p99LatencyMs: 10_000,
  /** Tokens of every model in an hour, all functions together. */
  tokensPerHour: 2_000_000,
};

export interface MonitoringProps {
  api: RestApi;
  /** Every function by its service name (the `service` dimension of its metrics). */
  functions: Record<string, IFunction>;
  queues: Record<string, WorkQueue>;
  /** Services whose functions call models (their Tokens metrics are summed for the spend alarm). */
  modelServices: string[];
}

/**
 * The API's dashboard and its alarms: 5xx rate and p99 latency at the gateway, token spend from
 * the functions' EMF metrics. The dashboard also shows requests and latency by route, tokens by
 * model, tool calls by kind, the queues and their dead letters, and every function's errors.
 */
export class Monitoring extends Construct {
  readonly dashboard: Dashboard;
  readonly alarms: { serverErrorRate: Alarm; p99Latency: Alarm; tokenSpend: Alarm };

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const namespace = metricsNamespaceOf(this);
    const threshold = (name: keyof typeof THRESHOLDS) => {
      const given = Number(this.node.tryGetContext(name) ?? THRESHOLDS[name]);
      if (!Number.isFinite(given) || given <= 0) throw new Error(`context ${name} must be a positive number`);
      return given;
    };
    const fiveMinutes = Duration.minutes(5);
    // A search over the functions' own metrics: one line per value of `dimension`.
    const search = (metric: string, dimension: string, statistic: string, label: string) =>
      new MathExpression({ expression: `SEARCH('{${namespace},service,${dimension}} MetricName="${metric}"', '${statistic}', 300)`, label, period: fiveMinutes });

    const requests = props.api.metricCount({ period: fiveMinutes, statistic: Stats.SUM });
    const serverErrors = props.api.metricServerError({ period: fiveMinutes, statistic: Stats.SUM });
    const serverErrorRate = new MathExpression({
      expression: 'IF(requests >= 20, 100 * errors / requests, 0)',
      usingMetrics: { requests, errors: serverErrors },
      label: '5xx %',
      period: fiveMinutes,
    });
    const p99 = props.api.metricLatency({ period: fiveMinutes, statistic: Stats.p(99) });
    const tokensOf = (service: string) => new Metric({ namespace, metricName: 'Tokens', dimensionsMap: { service }, statistic: Stats.SUM, period: Duration.hours(1) });
    const services = Object.fromEntries(props.modelServices.map((service, i) => [`t${i}`, tokensOf(service)]));
    const tokensPerHour = new MathExpression({
      expression: Object.keys(services).map((id) => `FILL(${id}, 0)`).join(' + '),
      usingMetrics: services,
      label: 'Tokens per hour',
      period: Duration.hours(1),
    });

    this.alarms = {
      serverErrorRate: alarmAt(this, 'ServerErrorRate', serverErrorRate, `More than ${threshold('serverErrorPercent')}% of API answers were 5xx`, threshold('serverErrorPercent'), 2),
      p99Latency: alarmAt(this, 'P99Latency', p99, `API p99 latency reached ${threshold('p99LatencyMs')} ms`, threshold('p99LatencyMs'), 3),
      tokenSpend: alarmAt(this, 'TokenSpend', tokensPerHour, `Models used ${threshold('tokensPerHour')} tokens or more in an hour`, threshold('tokensPerHour')),
    };

    const queueDepth = Object.entries(props.queues).flatMap(([name, q]): IMetric[] => [
      q.queue.metricApproximateNumberOfMessagesVisible({ period: fiveMinutes, label: `${name} waiting` }),
      q.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: fiveMinutes, label: `${name} dead letters` }),
    ]);
    const oldest = Object.entries(props.queues).map(([name, q]) => q.queue.metricApproximateAgeOfOldestMessage({ period: fiveMinutes, label: `${name} oldest (s)` }));
    const functionErrors = Object.entries(props.functions).map(([service, fn]) => fn.metricErrors({ period: fiveMinutes, label: service }));

    this.dashboard = new Dashboard(this, 'Dashboard', { defaultInterval: Duration.hours(3) });
    const wide = { width: 12, height: 6 };
    this.dashboard.addWidgets(
      new GraphWidget({ title: 'API requests and errors', left: [requests, props.api.metricClientError({ period: fiveMinutes, statistic: Stats.SUM }), serverErrors], right: [serverErrorRate], ...wide }),
      new GraphWidget({ title: 'API latency', left: [props.api.metricLatency({ period: fiveMinutes, statistic: Stats.p(50) }), p99], ...wide }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({ title: 'Requests by route', left: [search('Requests', 'route', 'Sum', 'requests')], ...wide }),
      new GraphWidget({ title: 'p99 latency by route (ms)', left: [search('Latency', 'route', 'p99', 'p99')], ...wide }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({ title: 'Tokens by model', left: [search('InputTokens', 'model', 'Sum', 'input'), search('OutputTokens', 'model', 'Sum', 'output')], ...wide }),
      new GraphWidget({ title: 'Token spend per hour', left: [tokensPerHour], leftAnnotations: [{ value: threshold('tokensPerHour'), label: 'alarm' }], ...wide }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({ title: 'Model calls and failures by model', left: [search('ModelCalls', 'model', 'Sum', 'calls'), search('ModelErrors', 'model', 'Sum', 'failures')], ...wide }),
      // Circuits opened (1) and closed (0) per model, the calls they skipped, and the prompt tokens read from providers' caches.
      new GraphWidget({ title: 'Circuit breakers and prompt cache by model', left: [search('CircuitOpen', 'model', 'Maximum', 'circuit open'), search('ModelCallsSkipped', 'model', 'Sum', 'skipped')], right: [search('CachedInputTokens', 'model', 'Sum', 'cached input')], ...wide }),
      new GraphWidget({ title: 'Tool calls and failures by kind', left: [search('ToolCalls', 'toolKind', 'Sum', 'calls'), search('ToolErrors', 'toolKind', 'Sum', 'failures')], ...wide }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({ title: 'Queues and dead letters', left: queueDepth, right: oldest, ...wide }),
      new GraphWidget({ title: 'Function errors', left: functionErrors, ...wide }),
    );
    this.dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', alarms: Object.values(this.alarms), width: 24, height: 4 }));
  }
}
