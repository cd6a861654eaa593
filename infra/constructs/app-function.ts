import { AssetHashType, DockerImage, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Code, Function as LambdaFunction, LayerVersion, Runtime, Tracing, type FunctionOptions } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays, type CfnLogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { cpSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { BUNDLE_EXTERNALS, bundleFunction, PROJECT_ROOT } from './function-bundle';
import { metricsNamespaceOf, serviceOf } from './metrics-names';

/**
 * Tracing, off by default: `cdk deploy -c tracing=true -c adotLayerArn=<the ADOT Node.js layer for
 * this region and ARM64>` gives every function X-Ray active tracing and the AWS Distro for
 * OpenTelemetry layer, which registers the SDK the code's OpenTelemetry API spans go to.
 */
function tracingOf(scope: Construct, id: string): { layer: ReturnType<typeof LayerVersion.fromLayerVersionArn> } | undefined {
  const flag = scope.node.tryGetContext('tracing') as unknown;
  if (flag !== true && flag !== 'true') return undefined;
  const arn = scope.node.tryGetContext('adotLayerArn') as unknown;
  if (typeof arn !== 'string' || !arn.startsWith('arn:')) throw new Error('tracing=true needs the context value adotLayerArn: the ARN of the ADOT Node.js Lambda layer (ARM64) in the target region');
  return { layer: LayerVersion.fromLayerVersionArn(scope, `${id}Adot`, arn) };
}

export interface AppFunctionProps extends FunctionOptions {
  /** Path of the handler module from the project root, e.g. `functions/agents/handler.ts`. */
  entry: string;
  /** Files shipped beside the code: paths from the project root, copied to `to` in the function's directory. */
  files?: Array<{ from: string; to: string }>;
}

/**
 * The function's code: `bundleFunction` run here (esbuild is a dependency of the project), its
 * output hashed so an unchanged bundle is not uploaded again. The Docker image is what CDK asks
 * for in case local bundling declines, which it never does.
 */
function bundledCode(entry: string, files: AppFunctionProps['files'] = []) {
  // From the entry's directory: CDK keeps one bundling per source path and options, and a
  // function (tryBundle) is not part of those, so the project root would give every function the
  // first one's code. Bundling reads from the project root whatever the path.
  return Code.fromAsset(dirname(join(PROJECT_ROOT, entry)), {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      image: DockerImage.fromRegistry('public.ecr.aws/sam/build-nodejs22.x'),
      local: {
        tryBundle(outputDir) {
          bundleFunction(entry, outputDir, { external: BUNDLE_EXTERNALS, sourcemap: true });
          for (const file of files) cpSync(join(PROJECT_ROOT, file.from), join(outputDir, file.to), { recursive: true });
          return true;
        },
      },
    },
  });
}

/**
 * The defaults every Cairn function shares (ARM64, Node 22, its code split and minified with source maps, its
 * own log group with retention, a role that may only write its own logs, its service name and
 * metrics namespace for logs and EMF metrics). Caller props are merged over them, never replaced
 * wholesale.
 */
export class AppFunction extends LambdaFunction {
  constructor(scope: Construct, id: string, props: AppFunctionProps) {
    const logGroup = new LogGroup(scope, `${id}Logs`, {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // Instead of the managed AWSLambdaBasicExecutionRole (logs on *), a role scoped to this log group.
    const role = new Role(scope, `${id}Role`, { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    role.addToPolicy(
      new PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [`${logGroup.logGroupArn}:*`] }),
    );
    const logGroupId = Stack.of(scope).getLogicalId(logGroup.node.defaultChild as CfnLogGroup);
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${logGroupId}.Arn>:*]`,
      reason: "Log streams are created at run time inside the function's own log group; `:*` names only them.",
    });
    const tracing = tracingOf(scope, id);
    if (tracing) {
      Validations.of(role).acknowledge({ id: 'AwsSolutions-IAM5[Resource::*]', reason: 'X-Ray accepts trace segments only on *: xray:PutTraceSegments and PutTelemetryRecords have no resource-level permissions.' });
    }
    const { entry, files, ...options } = props;
    super(scope, id, {
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: 512,
      timeout: Duration.seconds(29),
      logGroup,
      role,
      ...options,
      code: bundledCode(entry, files),
      handler: 'index.handler',
      ...(tracing ? { tracing: Tracing.ACTIVE, layers: [tracing.layer, ...(props.layers ?? [])] } : {}),
      // No NODE_OPTIONS=--enable-source-maps: it reads every loaded file's map at each cold start;
      // logged errors are mapped from the maps shipped beside the code when they happen
      // (shared/source-stack.ts).
      environment: {
        LOG_LEVEL: 'info',
        POWERTOOLS_SERVICE_NAME: serviceOf(entry),
        METRICS_NAMESPACE: metricsNamespaceOf(scope),
        ...(tracing ? { AWS_LAMBDA_EXEC_WRAPPER: '/opt/otel-handler' } : {}),
        ...props.environment,
      },
    });
  }
}
