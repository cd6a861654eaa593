import { Alarm, ComparisonOperator, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct } from 'constructs';

/**
 * An alarm when a metric reaches `threshold` (errors, dead letters, a 5xx rate, p99 latency, token
 * spend) in `evaluationPeriods` periods in a row; no data is no trouble.
 */
export function alarmAt(scope: Construct, id: string, metric: IMetric, description: string, threshold = 1, evaluationPeriods = 1): Alarm {
  return new Alarm(scope, id, {
    alarmDescription: description,
    metric,
    threshold,
    evaluationPeriods,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
}
