import { Stack } from 'aws-cdk-lib';
import type { Construct } from 'constructs';

/**
 * The CloudWatch namespace a stack's functions write their metrics to (METRICS_NAMESPACE), and the
 * `service` each function names itself (POWERTOOLS_SERVICE_NAME): the dashboard and alarms read
 * the metrics by these, so both sides take them from here.
 */
export const metricsNamespaceOf = (scope: Construct) => `Cairn/${Stack.of(scope).stackName}`;

/** `functions/agents/handler.ts` → `agents`. */
export const serviceOf = (entry: string) => entry.split('/').at(-2)!;
