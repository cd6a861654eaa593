import { LambdaIntegration, ResponseTransferMode, type IResource, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Duration } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import { alarmAt } from './alarm';
import { AppFunction, type AppFunctionProps } from './app-function';

export interface RouteGroupProps {
  api: RestApi;
  /** e.g. `v1/agents`: the group answers for these and everything below them. */
  paths: string[];
  /** Customer routes need an API key (usage plans); the docs do not. */
  apiKeyRequired: boolean;
  /** Paths (and below) whose callers authenticate in the app only (e.g. `Authorization: Bearer`). */
  appAuthenticatedPaths?: string[];
  /** Response streaming: the handler is `streamHandle(app)` and the integration uses STREAM. */
  streaming?: boolean;
  function: AppFunctionProps;
}

/** One route group: its Lambda and the API Gateway resources that proxy to it. */
export class RouteGroup extends Construct {
  readonly fn: AppFunction;
  readonly errorsAlarm: Alarm;

  constructor(scope: Construct, id: string, props: RouteGroupProps) {
    super(scope, id);
    this.fn = new AppFunction(this, 'Function', props.function);
    const integration = new LambdaIntegration(this.fn, {
      proxy: true,
      ...(props.streaming ? { responseTransferMode: ResponseTransferMode.STREAM } : {}),
    });
    // A browser's CORS preflight carries no key: OPTIONS reaches the app (which answers it) without one.
    const methods = (resource: IResource, apiKeyRequired: boolean) => {
      resource.addMethod('ANY', integration, { apiKeyRequired });
      if (apiKeyRequired) resource.addMethod('OPTIONS', integration, { apiKeyRequired: false });
    };
    const mount = (path: string, apiKeyRequired: boolean) => {
      let resource: IResource = props.api.root;
      for (const part of path.split('/')) resource = resource.getResource(part) ?? resource.addResource(part);
      methods(resource, apiKeyRequired);
      methods(resource.addResource('{proxy+}'), apiKeyRequired);
    };
    for (const path of props.paths) mount(path, props.apiKeyRequired);
    for (const path of props.appAuthenticatedPaths ?? []) mount(path, false);
    this.errorsAlarm = alarmAt(this, 'ErrorsAlarm', this.fn.metricErrors({ period: Duration.minutes(5) }), `${props.paths.join(', ')} function errors (unhandled exceptions, timeouts)`);
  }
}
