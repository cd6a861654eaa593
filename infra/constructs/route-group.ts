import { LambdaIntegration, type IResource, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import { AppFunction, type AppFunctionProps } from './app-function';

export interface RouteGroupProps {
  api: RestApi;
  /** e.g. `v1/agents`: the group answers for these and everything below them. */
  paths: string[];
  /** Customer routes need an API key (usage plans); the docs do not. */
  apiKeyRequired: boolean;
  function: AppFunctionProps;
}

/** One route group: its Lambda and the API Gateway resources that proxy to it. */
export class RouteGroup extends Construct {
  readonly fn: AppFunction;
  readonly errorsAlarm: Alarm;

  constructor(scope: Construct, id: string, props: RouteGroupProps) {
    super(scope, id);
    this.fn = new AppFunction(this, 'Function', props.function);
    const integration = new LambdaIntegration(this.fn, { proxy: true });
    const options = { apiKeyRequired: props.apiKeyRequired };
    for (const path of props.paths) {
      let resource: IResource = props.api.root;
      for (const part of path.split('/')) resource = resource.getResource(part) ?? resource.addResource(part);
      resource.addMethod('ANY', integration, options);
      resource.addResource('{proxy+}').addMethod('ANY', integration, options);
    }
    this.errorsAlarm = new Alarm(this, 'ErrorsAlarm', {
      alarmDescription: `${props.paths.join(', ')} function errors (unhandled exceptions, timeouts)`,
      metric: this.fn.metricErrors({ period: Duration.minutes(5) }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }
}
