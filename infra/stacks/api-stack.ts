import { CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  ApiKeySourceType,
  EndpointType,
  LogGroupLogDestination,
  MethodLoggingLevel,
  Period,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { limitsFor, RATE_AREAS } from '../../shared/plans';
import { PLANS } from '../../shared/config';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { CfnScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import { Validations } from 'aws-cdk-lib';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { alarmAt } from '../constructs/alarm';
import type { AlarmTopic } from '../constructs/alarm-topic';
import { AppFunction } from '../constructs/app-function';
import { Monitoring } from '../constructs/monitoring';
import type { DataTable } from '../constructs/data-table';
import type { WorkQueue } from '../constructs/work-queue';
import { ROUTE_GROUPS, type RouteGroupName, type RouteGroupSpec } from '../../functions/routes';
import type { AppFunctionProps } from '../constructs/app-function';
import { RouteGroup } from '../constructs/route-group';

export interface ApiStackProps extends StackProps {
  data: DataTable;
  ingestion: WorkQueue;
  workflowSteps: WorkQueue;
  webhooks: WorkQueue;
  /** Files' content: the knowledge-sources function writes it and signs upload URLs, the ingestion worker reads it. */
  files: IBucket;
  secretsKey: IKey;
  providerKeys: ISecret;
  platformAdminToken: ISecret;
  platformTokenKey: ISecret;
  /** Signs pagination cursors: every group that lists gets it at deployment (a dynamic reference, not a value in the template). */
  cursorKey: ISecret;
  /** Where every alarm goes. */
  alarms: AlarmTopic;
}

/** Stateless: the REST API, one Lambda per route group, usage plans. */
export class ApiStack extends Stack {
  readonly api: RestApi;
  readonly groups: Record<string, RouteGroup> = {};
  /** Every function by its service name (the `service` of its logs and metrics). */
  readonly functions: Record<string, AppFunction> = {};
  readonly monitoring: Monitoring;

  constructor(scope: Construct, id: string, props: ApiStackProps) {
    super(scope, id, props);
    const accessLogs = new LogGroup(this, 'AccessLogs', { retention: RetentionDays.THREE_MONTHS });
    this.api = new RestApi(this, 'Api', {
      description: 'Cairn public API',
      endpointTypes: [EndpointType.REGIONAL],
      apiKeySourceType: ApiKeySourceType.HEADER,
      // Multipart file uploads reach the function as base64, byte for byte.
      binaryMediaTypes: ['multipart/form-data'],
      cloudWatchRole: true,
      deployOptions: {
        stageName: 'prod',
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: AccessLogFormat.jsonWithStandardFields(),
        loggingLevel: MethodLoggingLevel.ERROR,
        metricsEnabled: true,
      },
    });

    // Every group of the route manifest; what differs per group is in its function's settings.
    const functions: Record<RouteGroupName, Omit<AppFunctionProps, 'entry'>> = {
      agents: {},
      evals: {},
      'knowledge-sources': {},
      // Execution event streams follow an execution for up to 10 minutes (streaming allows 15).
      workflows: { timeout: Duration.minutes(11) },
      'api-docs': this.docsFunction(),
      platform: {
        environment: {
          PLATFORM_ADMIN_TOKEN_SECRET_ARN: props.platformAdminToken.secretArn,
          PLATFORM_TOKEN_KEY_SECRET_ARN: props.platformTokenKey.secretArn,
          USAGE_PLAN_NAME_PREFIX: this.usagePlanNamePrefix,
        },
      },
      mcp: {},
    };
    const publicBaseUrl = this.publicBaseUrl();
    for (const [name, spec] of Object.entries(ROUTE_GROUPS) as Array<[RouteGroupName, RouteGroupSpec]>) {
      const group = new RouteGroup(this, spec.constructId, {
        api: this.api,
        paths: spec.paths.map(resourcePath),
        apiKeyRequired: spec.apiKeyRequired,
        appAuthenticatedPaths: (spec.appAuthenticatedPaths ?? []).map(resourcePath),
        streaming: spec.streaming ?? false,
        function: { entry: `functions/${name}/handler.ts`, ...functions[name] },
      });
      // URLs handed to others (OAuth redirect URIs, A2A endpoints) name the API as deployed behind a custom domain or proxy.
      if (publicBaseUrl) group.fn.addEnvironment('PUBLIC_BASE_URL', publicBaseUrl);
      // The docs serve a generated document: they need no data and list nothing.
      if (name !== 'api-docs') {
        props.data.bind(group.fn, 'RW');
        group.fn.addEnvironment('CURSOR_SIGNING_KEY', props.cursorKey.secretValue.unsafeUnwrap());
      }
      this.groups[name] = group;
      this.functions[name] = group.fn;
    }

    // Knowledge sources send ingestion work and seal credentials.
    const sources = this.groups['knowledge-sources']!.fn;
    sources.addEnvironment('INGESTION_QUEUE_URL', props.ingestion.queue.queueUrl);
    sources.addEnvironment('SECRETS_KMS_KEY_ID', props.secretsKey.keyArn);
    props.ingestion.queue.grantSendMessages(sources);
    // Exactly the two calls the secret box makes (not the kms:GenerateDataKey*/ReEncrypt* families).
    props.secretsKey.grant(sources, 'kms:GenerateDataKey', 'kms:Decrypt');
    // Writes files and deletes replaced versions; the URLs it signs can only PUT what it may.
    this.fileAccess(sources, props.files, ['s3:GetObject', 's3:PutObject', 's3:DeleteObject']);
    // Hybrid searches embed the query and may rerank.
    this.modelAccess(sources, props);
    this.ingestionWorker(props);
    this.modelAccess(this.groups.agents!.fn, props);
    this.modelAccess(this.groups.mcp!.fn, props);
    // Functions that write agents and workflows check model names against the same providers; the
    // platform function lists them for the admin (whether each has its key).
    for (const fn of [this.groups.workflows!.fn, this.groups.platform!.fn]) {
      for (const [name, value] of Object.entries(this.modelSettings().env)) fn.addEnvironment(name, value);
    }
    this.groups.platform!.fn.addEnvironment('PROVIDER_SECRETS_ARN', props.providerKeys.secretArn);
    props.providerKeys.grantRead(this.groups.platform!.fn);
    this.toolAccess(props);
    this.workflowWorker(props);
    this.codeRunner();
    this.sweeper(props);
    this.webhookWorker(props);
    this.workflowSchedules(props);

    this.usagePlans();
    this.platformAccess(props);

    alarmAt(this, 'Api5xxAlarm', this.api.metricServerError({ period: Duration.minutes(5) }), 'The API answered with 5xx', 5);
    this.monitoring = new Monitoring(this, 'Monitoring', {
      api: this.api,
      functions: this.functions,
      queues: { ingestion: props.ingestion, 'workflow steps': props.workflowSteps, 'webhook deliveries': props.webhooks },
      modelServices: ['agents', 'mcp', 'workflow-steps'],
    });
    props.alarms.notifyFrom(this);
    new CfnOutput(this, 'ApiUrl', { value: this.api.url });
    new CfnOutput(this, 'DashboardName', { value: this.monitoring.dashboard.dashboardName, description: 'CloudWatch dashboard of the API, models, tools and queues' });
  }

  /**
   * Workflow steps: the workflows function sends the first steps (and the next, when a person
   * completes a step), the worker runs each step and sends the next. The workflows function seals
   * the auth of http and tool steps; the worker opens it, calls models, converses with agents and
   * reads knowledge sources to search them. Its 5 minutes hold the longest step (240 s) and stay
   * under the queue's 6-minute visibility timeout.
   */
  private workflowWorker(props: ApiStackProps) {
    const api = this.groups.workflows!.fn;
    api.addEnvironment('WORKFLOW_QUEUE_URL', props.workflowSteps.queue.queueUrl);
    props.workflowSteps.queue.grantSendMessages(api);
    // It seals step auth, webhook and hook secrets, and opens a signed hook's secret to check a request.
    api.addEnvironment('SECRETS_KMS_KEY_ID', props.secretsKey.keyArn);
    props.secretsKey.grant(api, 'kms:GenerateDataKey', 'kms:Decrypt');
    const worker = this.queueWorker(props, 'workflow-steps', {
      id: 'WorkflowStepsWorker',
      queue: props.workflowSteps,
      queueUrlVariable: 'WORKFLOW_QUEUE_URL',
      memorySize: 1024,
      timeout: Duration.minutes(5),
      batchSize: 5,
      maxConcurrency: 20,
      label: 'Workflow steps worker',
    });
    this.modelAccess(worker, props);
  }

  /**
   * Tenants' code (workflow code steps, agents' code tools, the check of a source when a workflow
   * is written) runs in a function of its own: QuickJS in its bundle alone, a role that may only
   * write its own logs, no secrets in its environment, nothing it needs from the network. The
   * functions that run or check code invoke it synchronously.
   */
  private codeRunner() {
    const fn = new AppFunction(this, 'CodeRunner', {
      entry: 'functions/code-runner/handler.ts',
      memorySize: 512,
      timeout: Duration.seconds(15),
      // Read by code/javascript-sandbox.ts from the function's directory (LAMBDA_TASK_ROOT).
      files: [{ from: 'node_modules/@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm', to: 'quickjs.wasm' }],
    });
    this.functions['code-runner'] = fn;
    alarmAt(this, 'CodeRunnerErrors', fn.metricErrors({ period: Duration.minutes(5) }), 'Code runner errors');
    for (const caller of [this.groups.workflows!.fn, this.groups.agents!.fn, this.groups.mcp!.fn, this.groups.platform!.fn, this.functions['workflow-steps']!]) {
      caller.addEnvironment('CODE_RUNNER_FUNCTION', fn.functionName);
      // The function itself, not its versions and aliases (grantInvoke adds `:*`).
      caller.addToRolePolicy(new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [fn.functionArn] }));
    }
  }

  /**
   * A worker fed by one work queue: the table, its queue (it re-sends to it: retries, next
   * steps), the secrets key to open sealed secrets, partial batch failures reported, an errors alarm.
   */
  private queueWorker(
    props: ApiStackProps,
    name: string,
    spec: { id: string; queue: WorkQueue; queueUrlVariable: string; memorySize: number; timeout: Duration; batchSize: number; maxConcurrency: number; label: string },
  ): AppFunction {
    const worker = new AppFunction(this, spec.id, {
      entry: `functions/${name}/handler.ts`,
      memorySize: spec.memorySize,
      timeout: spec.timeout,
      environment: { [spec.queueUrlVariable]: spec.queue.queue.queueUrl, SECRETS_KMS_KEY_ID: props.secretsKey.keyArn },
    });
    props.data.bind(worker, 'RW');
    spec.queue.queue.grantSendMessages(worker);
    props.secretsKey.grant(worker, 'kms:Decrypt');
    worker.addEventSource(new SqsEventSource(spec.queue.queue, { batchSize: spec.batchSize, reportBatchItemFailures: true, maxConcurrency: spec.maxConcurrency }));
    this.functions[name] = worker;
    alarmAt(this, `${spec.id}Errors`, worker.metricErrors({ period: Duration.minutes(5) }), `${spec.label} errors`);
    return worker;
  }

  /**
   * Completion webhooks: whatever settles an execution (the steps worker, the workflows function
   * canceling or completing a person's step, the sweeper failing a stuck one) queues its delivery;
   * the worker signs and sends it (opening the webhook's sealed secret) and re-sends a failed one
   * with a delay.
   */
  private webhookWorker(props: ApiStackProps) {
    this.queueWorker(props, 'webhooks', {
      id: 'WebhookWorker',
      queue: props.webhooks,
      queueUrlVariable: 'WEBHOOK_QUEUE_URL',
      memorySize: 512,
      timeout: Duration.seconds(30),
      batchSize: 10,
      maxConcurrency: 10,
      label: 'Webhook worker',
    });
    for (const sender of [this.groups.workflows!.fn, this.functions['workflow-steps']!, this.functions.sweeper!]) {
      sender.addEnvironment('WEBHOOK_QUEUE_URL', props.webhooks.queue.queueUrl);
      props.webhooks.queue.grantSendMessages(sender);
    }
  }

  /**
   * Workflows' schedules: one EventBridge Scheduler schedule per workflow schedule, in a group of
   * this stack's, sending to the steps queue with a role that may do only that. The functions that
   * write workflows (workflows, platform) create, update and delete schedules in that group only.
   */
  private workflowSchedules(props: ApiStackProps) {
    const group = new CfnScheduleGroup(this, 'WorkflowSchedules', { name: `${this.stackName}-workflows` });
    const role = new Role(this, 'SchedulerRole', { assumedBy: new ServicePrincipal('scheduler.amazonaws.com'), description: 'Cairn: workflow schedules send to the steps queue' });
    props.workflowSteps.queue.grantSendMessages(role);
    const schedules = `arn:${this.partition}:scheduler:${this.region}:${this.account}:schedule/${group.name!}/*`;
    for (const fn of [this.groups.workflows!.fn, this.groups.platform!.fn]) {
      fn.addEnvironment('SCHEDULE_GROUP_NAME', group.name!);
      fn.addEnvironment('SCHEDULER_ROLE_ARN', role.roleArn);
      fn.addEnvironment('WORKFLOW_QUEUE_ARN', props.workflowSteps.queue.queueArn);
      fn.addToRolePolicy(new PolicyStatement({ actions: ['scheduler:CreateSchedule', 'scheduler:UpdateSchedule', 'scheduler:DeleteSchedule'], resources: [schedules] }));
      role.grantPassRole(fn.grantPrincipal);
      Validations.of(fn.role!).acknowledge({
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${group.name!}/*]`,
        reason: "Schedules are named per workflow at run time; only this stack's group, and only create, update and delete.",
      });
    }
  }

  /**
   * The sweeper, every five minutes: re-drives (then fails) executions and syncs whose messages
   * were lost, so nothing stays `running` or `indexing` forever. Sends to both queues.
   */
  private sweeper(props: ApiStackProps) {
    const fn = new AppFunction(this, 'Sweeper', {
      entry: 'functions/sweeper/handler.ts',
      memorySize: 512,
      timeout: Duration.minutes(2),
      environment: { INGESTION_QUEUE_URL: props.ingestion.queue.queueUrl, WORKFLOW_QUEUE_URL: props.workflowSteps.queue.queueUrl },
    });
    props.data.bind(fn, 'RW');
    props.ingestion.queue.grantSendMessages(fn);
    props.workflowSteps.queue.grantSendMessages(fn);
    new Rule(this, 'SweepSchedule', { schedule: Schedule.rate(Duration.minutes(5)), targets: [new LambdaFunction(fn, { retryAttempts: 0 })] });
    this.functions.sweeper = fn;
    alarmAt(this, 'SweeperErrors', fn.metricErrors({ period: Duration.minutes(15) }), 'Sweeper errors');
  }

  /**
   * Agents' tools: the agents and MCP functions open (and seal) tool auth and run workflow tools;
   * the platform function seals the auth of tools on the agents it writes.
   */
  private toolAccess(props: ApiStackProps) {
    // The MCP endpoint asks agents (their tools included) and runs workflows, as the agents group does.
    for (const fn of [this.groups.agents!.fn, this.groups.mcp!.fn]) {
      fn.addEnvironment('SECRETS_KMS_KEY_ID', props.secretsKey.keyArn);
      props.secretsKey.grant(fn, 'kms:GenerateDataKey', 'kms:Decrypt');
      fn.addEnvironment('WORKFLOW_QUEUE_URL', props.workflowSteps.queue.queueUrl);
      props.workflowSteps.queue.grantSendMessages(fn);
    }
    // Evaluation runs start here: their cases go to the steps queue (the worker runs them), and a
    // judge's model is checked against the deployment's providers (whether its key is there).
    const evals = this.groups.evals!.fn;
    evals.addEnvironment('WORKFLOW_QUEUE_URL', props.workflowSteps.queue.queueUrl);
    props.workflowSteps.queue.grantSendMessages(evals);
    for (const [name, value] of Object.entries(this.modelSettings().env)) evals.addEnvironment(name, value);
    evals.addEnvironment('PROVIDER_SECRETS_ARN', props.providerKeys.secretArn);
    props.providerKeys.grantRead(evals);
    const platform = this.groups.platform!.fn;
    platform.addEnvironment('SECRETS_KMS_KEY_ID', props.secretsKey.keyArn);
    props.secretsKey.grant(platform, 'kms:GenerateDataKey');
  }

  /** `-c publicBaseUrl=https://api.example.com`: the API's URL behind a custom domain or proxy (default: API Gateway's own domain and stage). */
  private publicBaseUrl(): string | undefined {
    const given = this.node.tryGetContext('publicBaseUrl') as unknown;
    if (given === undefined) return undefined;
    if (typeof given !== 'string' || !URL.canParse(given) || !/^https?:$/.test(new URL(given).protocol)) throw new Error('publicBaseUrl: must be an http(s) URL');
    return given.replace(/\/+$/, '');
  }

  /**
   * The deployer's model settings from the context: `modelProviders` (MODEL_PROVIDERS without keys:
   * the provider secret's MODEL_PROVIDERS gives those), `modelPrices` and `defaultModelProvider`.
   * Each is JSON (or an object in cdk.json); checked here so a typo fails the synth, not a turn.
   */
  private modelSettings(): { env: Record<string, string>; bedrockRegions: string[] } {
    const json = (name: string): Record<string, unknown> | undefined => {
      const given = this.node.tryGetContext(name) as unknown;
      if (given === undefined) return undefined;
      const value = typeof given === 'string' ? (JSON.parse(given) as unknown) : given;
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${name}: must be a JSON object`);
      return value as Record<string, unknown>;
    };
    const providers = json('modelProviders');
    const prices = json('modelPrices');
    const defaultProvider = this.node.tryGetContext('defaultModelProvider') as unknown;
    const bedrockRegions = new Set([this.region]);
    for (const [name, settings] of Object.entries(providers ?? {})) {
      const s = settings as { type?: unknown; region?: unknown; apiKey?: unknown };
      if ('apiKey' in s) throw new Error(`modelProviders.${name}.apiKey: keep keys out of the template; put them in the provider secret's MODEL_PROVIDERS`);
      if (s.type === 'bedrock' && typeof s.region === 'string') bedrockRegions.add(s.region);
    }
    return {
      env: {
        ...(providers ? { MODEL_PROVIDERS: JSON.stringify(providers) } : {}),
        ...(prices ? { MODEL_PRICES: JSON.stringify(prices) } : {}),
        ...(typeof defaultProvider === 'string' ? { DEFAULT_MODEL_PROVIDER: defaultProvider } : {}),
      },
      bedrockRegions: [...bedrockRegions],
    };
  }

  /**
   * What calling models needs: provider keys from Secrets Manager, the deployer's model settings,
   * and Bedrock: Converse and ConverseStream on foundation models in any region (a cross-region
   * inference profile `us.anthropic.…` sends each request to one of its regions) and on the
   * inference profiles of this region and of any `bedrock` provider's region.
   */
  private modelAccess(fn: AppFunction, props: ApiStackProps) {
    const settings = this.modelSettings();
    fn.addEnvironment('PROVIDER_SECRETS_ARN', props.providerKeys.secretArn);
    fn.addEnvironment('BEDROCK_REGION', this.region);
    for (const [name, value] of Object.entries(settings.env)) fn.addEnvironment(name, value);
    props.providerKeys.grantRead(fn);
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream'],
        resources: [
          `arn:${this.partition}:bedrock:*::foundation-model/*`,
          ...settings.bedrockRegions.map((region) => `arn:${this.partition}:bedrock:${region}:${this.account}:inference-profile/*`),
        ],
      }),
    );
    Validations.of(fn.role!).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:*::foundation-model/*]`,
      reason: 'Agents name their Bedrock model at run time (bedrock/<modelId>), and a cross-region inference profile may send a request to any of its regions; only InvokeModel and its stream.',
    });
    for (const region of settings.bedrockRegions) {
      Validations.of(fn.role!).acknowledge({
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:${region === this.region ? '<AWS::Region>' : region}:<AWS::AccountId>:inference-profile/*]`,
        reason: "Cross-region inference profiles are named by the agent's model at run time; only InvokeModel and its stream.",
      });
    }
  }

  /** The files bucket for one function: exactly these object actions under `files/` and `uploads/`, and listing them. */
  private fileAccess(fn: AppFunction, bucket: IBucket, actions: string[]) {
    fn.addEnvironment('BLOB_BUCKET', bucket.bucketName);
    fn.addToRolePolicy(new PolicyStatement({ actions, resources: [bucket.arnForObjects('files/*'), bucket.arnForObjects('uploads/*')] }));
    fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucket.bucketArn], conditions: { StringLike: { 's3:prefix': ['files/*', 'uploads/*'] } } }));
    // cdk-nag names the bucket by the data stack's export of its ARN.
    for (const prefix of ['files', 'uploads']) {
      Validations.of(fn.role!).acknowledge({
        id: `AwsSolutions-IAM5[Resource::CairnData:ExportsOutputFnGetAttFiles8E6940B8ArnD8EE6C03/${prefix}/*]`,
        reason: `Objects are keyed by tenant, source and version under ${prefix}/: the function reaches any of them, only with the object actions it uses.`,
      });
    }
  }

  /**
   * The ingestion worker: one message per invocation (a batch is already up to 500 rows or 200
   * files), partial batch failures reported, a few in parallel so one source cannot flood the table.
   */
  private ingestionWorker(props: ApiStackProps) {
    const worker = this.queueWorker(props, 'ingestion', {
      id: 'IngestionWorker',
      queue: props.ingestion,
      queueUrlVariable: 'INGESTION_QUEUE_URL',
      // Parsing a large PDF holds the file and pdf.js's structures: room for a 100 MB file.
      memorySize: 2048,
      timeout: Duration.minutes(10),
      batchSize: 1,
      maxConcurrency: 5,
      label: 'Ingestion worker',
    });
    // Reads files to index them, and deletes a deleted source's files.
    this.fileAccess(worker, props.files, ['s3:GetObject', 's3:DeleteObject']);
    this.sourceBucketAccess(worker);
    // Sources with an embedding model are embedded as they are indexed.
    this.modelAccess(worker, props);
  }

  /**
   * `s3` knowledge sources read buckets the deployer names in the context (`-c s3SourceBuckets=a,b`):
   * the worker may list and read them, nothing else; the API checks sources against the same list.
   */
  private sourceBucketAccess(worker: AppFunction) {
    const given = this.node.tryGetContext('s3SourceBuckets') as unknown;
    const buckets = (Array.isArray(given) ? given.map(String) : typeof given === 'string' ? given.split(',') : []).map((b) => b.trim()).filter(Boolean);
    for (const bucket of buckets) {
      if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) throw new Error(`s3SourceBuckets: ${JSON.stringify(bucket)} is not an S3 bucket name`);
    }
    const list = buckets.join(',');
    worker.addEnvironment('S3_SOURCE_BUCKETS', list);
    this.groups['knowledge-sources']!.fn.addEnvironment('S3_SOURCE_BUCKETS', list);
    if (buckets.length === 0) return;
    worker.addToRolePolicy(new PolicyStatement({ actions: ['s3:ListBucket'], resources: buckets.map((b) => `arn:${this.partition}:s3:::${b}`) }));
    worker.addToRolePolicy(new PolicyStatement({ actions: ['s3:GetObject'], resources: buckets.map((b) => `arn:${this.partition}:s3:::${b}/*`) }));
    for (const bucket of buckets) {
      Validations.of(worker.role!).acknowledge({
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::${bucket}/*]`,
        reason: `The deployer granted bucket ${bucket} to s3 knowledge sources (context s3SourceBuckets): any object in it may be indexed, read-only.`,
      });
    }
  }

  /**
   * A usage plan per plan, approximating the app's limits: the gateway is a backstop; the app's
   * limiter is the one that answers with headers. API Gateway quotas count per day at the finest.
   */
  private usagePlans() {
    for (const plan of PLANS) {
      const limits = RATE_AREAS.map((area) => limitsFor(plan, area));
      const perMinute = limits.reduce((sum, l) => sum + (l?.minute ?? 0), 0);
      const perHour = limits.reduce((sum, l) => sum + (l?.hour ?? 0), 0);
      const usagePlan = this.api.addUsagePlan(`UsagePlan-${plan}`, {
        name: `${this.usagePlanNamePrefix}${plan}`,
        description: `Cairn plan ${plan}`,
        apiStages: [{ api: this.api, stage: this.api.deploymentStage }],
        ...(plan === 'unlimited'
          ? {}
          : {
              throttle: { rateLimit: Math.ceil(perMinute / 60), burstLimit: perMinute },
              quota: { limit: perHour * 24, period: Period.DAY },
            }),
      });
      new CfnOutput(this, `UsagePlanId${plan[0]!.toUpperCase()}${plan.slice(1)}`, {
        value: usagePlan.usagePlanId,
        description: `--usage-plan-id for keys on plan ${plan}`,
      });
    }
  }

  /** The docs function serves Swagger UI from the bundle itself: no CDN. */
  private docsFunction(): Omit<AppFunctionProps, 'entry'> {
    return {
      environment: { DOCS_ASSETS_DIR: '/var/task/swagger-ui' },
      files: ['swagger-ui.css', 'swagger-ui-bundle.js'].map((name) => ({ from: `node_modules/swagger-ui-dist/${name}`, to: `swagger-ui/${name}` })),
    };
  }

  /** The platform function finds the usage plans by these names. */
  private get usagePlanNamePrefix() {
    return `${this.stackName}-`;
  }

  /**
   * The platform API: token-authenticated in the app (no API key), reads its two secrets, and
   * registers provisioned tenants' keys in their plan's usage plan.
   */
  private platformAccess(props: ApiStackProps) {
    const group = this.groups.platform!;
    props.platformAdminToken.grantRead(group.fn);
    props.platformTokenKey.grantRead(group.fn);
    const apigw = (path: string) => `arn:${this.partition}:apigateway:${this.region}::${path}`;
    group.fn.addToRolePolicy(new PolicyStatement({ actions: ['apigateway:GET'], resources: [apigw('/usageplans')] }));
    group.fn.addToRolePolicy(new PolicyStatement({ actions: ['apigateway:POST'], resources: [apigw('/apikeys'), apigw('/usageplans/*/keys')] }));
    group.fn.addToRolePolicy(new PolicyStatement({ actions: ['apigateway:DELETE'], resources: [apigw('/apikeys/*')] }));
    Validations.of(group.fn.role!).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:apigateway:<AWS::Region>::/apikeys/*]',
      reason: 'Undoing a failed provisioning deletes the API key it just created, whose id is only known at run time.',
    });
    Validations.of(group.fn.role!).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:apigateway:<AWS::Region>::/usageplans/*/keys]',
      reason: 'Usage plan ids cannot be named here without a dependency cycle (function → plans → deployment → function); the function only adds keys.',
    });
  }
}

/** `/v1/agents` → `v1/agents`: API Gateway resources are built part by part from the root. */
const resourcePath = (path: string) => path.replace(/^\//, '');
