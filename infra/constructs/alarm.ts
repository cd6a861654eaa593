import { Alarm, ComparisonOperator, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct } from 'constructs';

/** An alarm when a metric's 5-minute sum reaches `threshold` (errors, dead letters, 5xx). */
export function alarmAt(scope: Construct, id: string, metric: IMetric, description: string, threshold = 1): Alarm {
  return new Alarm(scope, id, {
    alarmDescription: description,
    metric,
    threshold,
    evaluationPeriods: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
}
