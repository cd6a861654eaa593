import { AssetStaging, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, LayerVersion, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, type NodejsFunctionProps } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays, type CfnLogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { fileURLToPath } from 'node:url';
import { metricsNamespaceOf, serviceOf } from './metrics-names';

export const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Bundle settings shared with the test that runs the bundles themselves. */
export const BUNDLE_TARGET = 'node22';
export const BUNDLE_MAIN_FIELDS = ['module', 'main'];
/**
 * Packages the bundles take from elsewhere (paths from the project root, where bundling runs):
 * zod without its locales (see infra/bundling/zod/README.md), and no Ajv, which the MCP SDK
 * imports for a default validator Cairn never uses (infra/bundling/ajv/README.md).
 */
export const BUNDLE_ALIAS = { zod: './infra/bundling/zod', 'zod-to-json-schema': './infra/bundling/zod-to-json-schema', ajv: './infra/bundling/ajv', 'ajv-formats': './infra/bundling/ajv-formats' };
/** Left out of the bundles: the AWS SDK v3 the Node.js 22 runtime provides (what CDK leaves out by default, said here so the benchmark measures the same). */
export const BUNDLE_EXTERNALS = ['@aws-sdk/*'];
/** Some dependencies still call require(); give ESM bundles one. */
export const ESM_REQUIRE_BANNER = "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);";

/**
 * The same settings as esbuild's own options, for code that bundles a function itself (the bundle
 * test, the cold-start benchmark); they add the entry, the output and, where the AWS SDK must be left
 * out as the runtime provides it, `external: BUNDLE_EXTERNALS`.
 */
export const ESBUILD_OPTIONS = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: BUNDLE_TARGET,
  mainFields: BUNDLE_MAIN_FIELDS,
  alias: BUNDLE_ALIAS,
  minify: true,
  banner: { js: ESM_REQUIRE_BANNER },
  logLevel: 'silent',
} as const;

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

export interface AppFunctionProps extends NodejsFunctionProps {
  /** Path of the handler module from the project root, e.g. `functions/agents/handler.ts`. */
  entry: string;
}

/**
 * The defaults every Cairn function shares (ARM64, Node 22, ESM, minified with source maps, its
 * own log group with retention, a role that may only write its own logs, its service name and
 * metrics namespace for logs and EMF metrics). Caller props are merged over them, never replaced
 * wholesale.
 */
export class AppFunction extends NodejsFunction {
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
    super(scope, id, {
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: 512,
      timeout: Duration.seconds(29),
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: `${PROJECT_ROOT}package-lock.json`,
      logGroup,
      role,
      ...props,
      entry: `${PROJECT_ROOT}${props.entry}`,
      ...(tracing ? { tracing: Tracing.ACTIVE, layers: [tracing.layer, ...(props.layers ?? [])] } : {}),
      environment: {
        NODE_OPTIONS: '--enable-source-maps',
        LOG_LEVEL: 'info',
        POWERTOOLS_SERVICE_NAME: serviceOf(props.entry),
        METRICS_NAMESPACE: metricsNamespaceOf(scope),
        ...(tracing ? { AWS_LAMBDA_EXEC_WRAPPER: '/opt/otel-handler' } : {}),
        ...props.environment,
      },
      bundling: {
        format: OutputFormat.ESM,
        target: BUNDLE_TARGET,
        minify: true,
        sourceMap: true,
        mainFields: BUNDLE_MAIN_FIELDS,
        banner: ESM_REQUIRE_BANNER,
        externalModules: BUNDLE_EXTERNALS,
        esbuildArgs: { '--alias': Object.entries(BUNDLE_ALIAS).map(([name, path]) => `${name}=${path}`) },
        // Docker bundling (when esbuild is not installed here) runs from the project root too, so the aliases resolve.
        workingDirectory: AssetStaging.BUNDLING_INPUT_DIR,
        ...props.bundling,
      },
    });
  }
}
