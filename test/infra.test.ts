import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROUTE_GROUPS, routeGroupOf, type RouteGroupSpec } from '../functions/routes';
import { buildApp } from '../infra/app';

const cdkJson = JSON.parse(readFileSync(new URL('../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> };
/**
 * The app with more context, its functions not bundled: the first build bundles them for real, and
 * bundling again (half a minute on two busy cores) would only test esbuild once more.
 */
const variant = (context: Record<string, unknown>) => buildApp(new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [], ...context } }));

describe('CDK app', () => {
  let built: ReturnType<typeof buildApp>;
  let data: Template;
  let api: Template;

  beforeAll(() => {
    built = buildApp(new App({ context: cdkJson.context }));
    data = Template.fromStack(built.data);
    api = Template.fromStack(built.api);
    // The synth bundles every function with esbuild: minutes on a loaded, shared machine (a
    // fresh-clone CI run took 153 s). A time limit here checks the machine, not the stacks.
  }, 600_000);

  it('keeps the table stateful: on-demand, PITR, TTL, encrypted, retained', () => {
    data.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: Match.objectLike({
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
        SSESpecification: { SSEEnabled: true },
        DeletionProtectionEnabled: true,
      }),
    });
  });

  it('gives the three work queues (ingestion, workflow steps, webhook deliveries) a dead-letter queue, encryption and TLS-only access', () => {
    const queues = data.findResources('AWS::SQS::Queue');
    const withRedrive = Object.values(queues).filter((q) => q.Properties.RedrivePolicy);
    expect(withRedrive).toHaveLength(3);
    for (const q of withRedrive) {
      expect(q.Properties.RedrivePolicy.maxReceiveCount).toBe(5);
      expect(q.Properties.SqsManagedSseEnabled).toBe(true);
    }
    expect(Object.keys(queues)).toHaveLength(6);
    data.resourceCountIs('AWS::SQS::QueuePolicy', 6);
    data.hasResourceProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
    data.resourceCountIs('AWS::CloudWatch::Alarm', 3);
  });

  it('runs one ARM64 Node 22 function per route group, ESM-bundled, with the table name', () => {
    const functions = api.findResources('AWS::Lambda::Function');
    expect(Object.keys(functions)).toHaveLength(12); // seven route groups, three workers, the sweeper and the code runner
    for (const fn of Object.values(functions)) {
      expect(fn.Properties.Runtime).toBe('nodejs22.x');
      expect(fn.Properties.Architectures).toEqual(['arm64']);
      expect(fn.Properties.Handler).toBe('index.handler');
      // Source maps ship beside the code and are read when an error is logged, not at every start.
      expect(fn.Properties.Environment.Variables.NODE_OPTIONS).toBeUndefined();
    }
    const withTable = Object.values(functions).filter((f) => f.Properties.Environment.Variables.TABLE_NAME);
    expect(withTable).toHaveLength(10); // the docs function and the code runner have no data access
  });

  it('grants table data access on the table only, never dynamodb:* or DeleteTable', () => {
    const policies = Object.values(api.findResources('AWS::IAM::Policy'));
    const statements = policies.flatMap((p) => p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>);
    const dynamo = statements.filter((s) => [s.Action].flat().some((a) => a.startsWith('dynamodb:')));
    expect(dynamo.filter((s) => [s.Action].flat().includes('dynamodb:PutItem'))).toHaveLength(10);
    for (const s of dynamo) {
      const actions = [s.Action].flat();
      expect(actions).not.toContain('dynamodb:*');
      expect(actions).not.toContain('dynamodb:DeleteTable');
      expect(JSON.stringify(s.Resource)).not.toContain('"*"');
    }
  });

  it('requires an API key on every customer route and none on the docs', () => {
    const resources = api.findResources('AWS::ApiGateway::Resource');
    const pathOf = (id: string): string => {
      const r = resources[id];
      if (!r) return '';
      const parent = r.Properties.ParentId;
      const parentPath = parent && parent.Ref ? pathOf(parent.Ref) : '';
      return `${parentPath}/${r.Properties.PathPart}`;
    };
    const methods = Object.values(api.findResources('AWS::ApiGateway::Method'));
    const byPath = methods.map((m) => ({ path: pathOf(m.Properties.ResourceId.Ref), keyRequired: m.Properties.ApiKeyRequired }));
    for (const group of ['agents', 'knowledge-sources', 'workflows', 'executions', 'usage', 'traces', 'eval-datasets', 'eval-runs', 'end-users', 'oauth-providers']) {
      expect(byPath).toEqual(expect.arrayContaining([
        { path: `/v1/${group}`, keyRequired: true },
        { path: `/v1/${group}/{proxy+}`, keyRequired: true },
      ]));
    }
    for (const m of byPath.filter((m) => m.path.startsWith('/v1/docs') || m.path.startsWith('/v1/openapi.json'))) {
      expect(m.keyRequired).toBe(false);
    }
    expect(byPath.filter((m) => m.keyRequired === true)).toHaveLength(20);
    const options = methods.filter((m) => m.Properties.HttpMethod === 'OPTIONS');
    expect(options).toHaveLength(20); // beside each keyed ANY
    // The OAuth callback: the provider sends the end user's browser back without a key.
    expect(byPath).toContainEqual({ path: '/v1/oauth/callback', keyRequired: false });
    for (const m of options) expect(m.Properties.ApiKeyRequired).toBe(false);
    expect(byPath).toContainEqual({ path: '/v1/chat/completions', keyRequired: false });
    // The platform API authenticates access tokens in the app: no API key.
    expect(byPath).toEqual(expect.arrayContaining([
      { path: '/platform', keyRequired: false },
      { path: '/platform/{proxy+}', keyRequired: false },
    ]));
    api.hasResourceProperties('AWS::ApiGateway::RestApi', { ApiKeySourceType: 'HEADER' });
    api.hasResourceProperties('AWS::ApiGateway::Stage', { AccessLogSetting: Match.objectLike({ DestinationArn: Match.anyValue() }) });
    // Exactly the route manifest local mode routes by: no path more, none less.
    // Where a key is required, OPTIONS is not: a browser's CORS preflight carries none.
    const methodsAt = (path: string, keyRequired: boolean) => [{ path, keyRequired }, ...(keyRequired ? [{ path, keyRequired: false }] : [])];
    const expected = Object.values(ROUTE_GROUPS).flatMap((spec: RouteGroupSpec) => [
      ...spec.paths.flatMap((path) => [...methodsAt(path, spec.apiKeyRequired), ...methodsAt(`${path}/{proxy+}`, spec.apiKeyRequired)]),
      ...(spec.appAuthenticatedPaths ?? []).flatMap((path) => [...methodsAt(path, false), ...methodsAt(`${path}/{proxy+}`, false)]),
    ]);
    const byPathOrder = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : 1);
    expect([...byPath].sort(byPathOrder)).toEqual(expected.sort(byPathOrder));
  });

  it('routes local mode by the same manifest as API Gateway', () => {
    expect(routeGroupOf('/v1/agents')).toBe('agents');
    expect(routeGroupOf('/v1/agents/agt_1/converse')).toBe('agents');
    expect(routeGroupOf('/v1/chat/completions')).toBe('agents');
    expect(routeGroupOf('/v1/models/agt_1')).toBe('agents');
    expect(routeGroupOf('/v1/agentsx')).toBeUndefined();
    expect(routeGroupOf('/v1/openapi.json')).toBe('api-docs');
    expect(routeGroupOf('/platform/db/ops')).toBe('platform');
    expect(routeGroupOf('/healthz')).toBeUndefined();
  });

  it('gives the platform function its two secrets and only the API Gateway calls provisioning makes', () => {
    const fn = Object.values(api.findResources('AWS::Lambda::Function')).find((f) => f.Properties.Environment?.Variables?.PLATFORM_ADMIN_TOKEN_SECRET_ARN);
    expect(fn?.Properties.Environment.Variables).toMatchObject({ USAGE_PLAN_NAME_PREFIX: 'CairnApi-', PLATFORM_TOKEN_KEY_SECRET_ARN: expect.anything() });
    const statements = Object.values(api.findResources('AWS::IAM::Policy')).flatMap((p) => p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[] }>);
    const gatewayActions = statements.flatMap((s) => [s.Action].flat()).filter((a) => a.startsWith('apigateway:'));
    expect(gatewayActions.sort()).toEqual(['apigateway:DELETE', 'apigateway:GET', 'apigateway:POST']);
    data.resourceCountIs('AWS::SecretsManager::Secret', 4);
  });

  it('gives every group that lists the cursor-signing key as a deploy-time reference, never a value', () => {
    const functions = Object.values(api.findResources('AWS::Lambda::Function'));
    const withKey = functions.filter((f) => f.Properties.Environment?.Variables?.CURSOR_SIGNING_KEY);
    expect(withKey).toHaveLength(6); // agents, evals, knowledge sources, workflows, platform, mcp
    for (const f of withKey) expect(JSON.stringify(f.Properties.Environment.Variables.CURSOR_SIGNING_KEY)).toContain('{{resolve:secretsmanager:');
    expect(functions.find((f) => f.Properties.Environment?.Variables?.DOCS_ASSETS_DIR)?.Properties.Environment.Variables.CURSOR_SIGNING_KEY).toBeUndefined();
  });

  it('streams the agents group (converse, chat completions) and the workflows group (execution events) with response streaming', () => {
    const methods = Object.values(api.findResources('AWS::ApiGateway::Method'));
    const streaming = methods.filter((m) => m.Properties.Integration.ResponseTransferMode === 'STREAM');
    // /v1/agents, /v1/usage, /v1/traces, /v1/end-users and /v1/oauth-providers and below (ANY and OPTIONS each); /v1/chat/completions,
    // /v1/models, /v1/responses, /a2a and /v1/oauth/callback (and below); /v1/workflows and /v1/executions and below (ANY and OPTIONS each), /v1/hooks and below (ANY, no key)
    expect(streaming).toHaveLength(40);
    for (const m of streaming) expect(JSON.stringify(m.Properties.Integration.Uri)).toContain('response-streaming-invocations');
  });

  it('gives the functions that call models provider keys from Secrets Manager, and Bedrock: Converse and its stream, in any region (cross-region profiles)', () => {
    data.hasResource('AWS::SecretsManager::Secret', { DeletionPolicy: 'Retain' });
    const functions = Object.values(api.findResources('AWS::Lambda::Function'));
    const withModels = functions.filter((f) => f.Properties.Environment.Variables.BEDROCK_REGION);
    // agents, MCP (ask_agent), the workflow steps worker, and for hybrid search the knowledge-sources API and the ingestion worker
    expect(withModels.map((f) => f.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME).sort()).toEqual(['agents', 'ingestion', 'knowledge-sources', 'mcp', 'workflow-steps']);
    expect(withModels[0]!.Properties.Environment.Variables.BEDROCK_REGION).toEqual({ Ref: 'AWS::Region' });
    // The platform reads the keys too (its admin listing says which providers have one), and calls no model.
    const withKeys = functions.filter((f) => f.Properties.Environment.Variables.PROVIDER_SECRETS_ARN);
    expect(withKeys.map((f) => f.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME).sort()).toEqual(['agents', 'evals', 'ingestion', 'knowledge-sources', 'mcp', 'platform', 'workflow-steps']);
    const statements = Object.values(api.findResources('AWS::IAM::Policy')).flatMap((p) => p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>);
    const bedrock = statements.filter((st) => [st.Action].flat().some((a) => a.startsWith('bedrock:')));
    expect(bedrock).toHaveLength(5);
    for (const st of bedrock) expect(st.Action).toEqual(['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream']);
    expect(JSON.stringify(bedrock[0]!.Resource)).toContain(':bedrock:*::foundation-model/*');
    expect(JSON.stringify(bedrock[0]!.Resource)).toContain(':inference-profile/*');
  });

  it('takes named model providers, prices and the default provider from context, grants a bedrock provider’s region, and refuses keys in the template', () => {
    const providers = { vllm: { type: 'openai-compatible', baseUrl: 'http://vllm.internal:8000/v1' }, 'bedrock-eu': { type: 'bedrock', region: 'eu-west-1' } };
    const prices = { 'vllm/llama-3': { input: 0, output: 0 }, 'bedrock-eu/anthropic.claude-3-5-haiku-20241022-v1:0': { input: 0.0008, output: 0.004, cachedInput: 0.00008, cacheWrite: 0.001 } };
    const app = variant({ modelProviders: JSON.stringify(providers), modelPrices: prices, defaultModelProvider: 'vllm' });
    const template = Template.fromStack(app.api);
    const functions = Object.values(template.findResources('AWS::Lambda::Function'));
    const agents = functions.find((f) => f.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME === 'agents')!;
    expect(JSON.parse(agents.Properties.Environment.Variables.MODEL_PROVIDERS)).toEqual(providers);
    expect(JSON.parse(agents.Properties.Environment.Variables.MODEL_PRICES)).toEqual(prices);
    expect(agents.Properties.Environment.Variables.DEFAULT_MODEL_PROVIDER).toBe('vllm');
    // The workflows API checks step models against the same providers.
    const workflows = functions.find((f) => f.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME === 'workflows')!;
    expect(JSON.parse(workflows.Properties.Environment.Variables.MODEL_PROVIDERS)).toEqual(providers);
    const statements = Object.values(template.findResources('AWS::IAM::Policy')).flatMap((p) => p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>);
    const bedrock = statements.find((st) => [st.Action].flat().some((a) => a.startsWith('bedrock:')))!;
    expect(JSON.stringify(bedrock.Resource)).toContain('bedrock:eu-west-1:');
    expect(() => variant({ modelProviders: { vllm: { type: 'openai-compatible', baseUrl: 'http://x', apiKey: 'sk-1' } } })).toThrow(/apiKey: keep keys out of the template/);
  });

  it('names the API by the publicBaseUrl the context gives (a custom domain), and by API Gateway’s own domain without one', () => {
    const named = (app: ReturnType<typeof variant>) =>
      Object.values(Template.fromStack(app.api).findResources('AWS::Lambda::Function')).map((f) => f.Properties.Environment?.Variables?.PUBLIC_BASE_URL as string | undefined);
    const given = named(variant({ publicBaseUrl: 'https://api.example.com/' })).filter(Boolean);
    expect(given.length).toBeGreaterThanOrEqual(6);
    expect(new Set(given)).toEqual(new Set(['https://api.example.com']));
    expect(named(variant({})).filter(Boolean)).toEqual([]);
    expect(() => variant({ publicBaseUrl: 'ftp://x' })).toThrow(/publicBaseUrl/);
  });

  it('has a usage plan per plan, scaled like the app limits', () => {
    const plans = Object.values(api.findResources('AWS::ApiGateway::UsagePlan')).map((p) => p.Properties);
    expect(plans.map((p) => p.UsagePlanName).sort()).toEqual(['CairnApi-enterprise', 'CairnApi-free', 'CairnApi-pro', 'CairnApi-unlimited']);
    const free = plans.find((p) => p.UsagePlanName === 'CairnApi-free');
    const pro = plans.find((p) => p.UsagePlanName === 'CairnApi-pro');
    expect(free.Throttle).toEqual({ RateLimit: 3, BurstLimit: 170 });
    expect(free.Quota).toEqual({ Limit: 1700 * 24, Period: 'DAY' });
    expect(pro.Throttle.BurstLimit).toBe(1700);
    expect(plans.find((p) => p.UsagePlanName === 'CairnApi-unlimited').Throttle).toBeUndefined();
  });

  it('feeds the workflow steps worker from its queue with partial batch failure reporting', () => {
    api.hasResourceProperties('AWS::Lambda::EventSourceMapping', { BatchSize: 5, FunctionResponseTypes: ['ReportBatchItemFailures'] });
    const senders = Object.values(api.findResources('AWS::Lambda::Function')).filter((f) => f.Properties.Environment.Variables.WORKFLOW_QUEUE_URL);
    expect(senders).toHaveLength(6); // the workflows API, the worker, the sweeper, agents (workflow tools), MCP (run_workflow) and evals (runs' cases)
  });

  it('serves /mcp from its own function, authenticated in the app (API Gateway asks no key: MCP clients send it as Bearer too)', () => {
    const methods = Object.values(api.findResources('AWS::ApiGateway::Method'));
    const resources = api.findResources('AWS::ApiGateway::Resource');
    const mcp = Object.entries(resources).find(([, r]) => r.Properties.PathPart === 'mcp')![0];
    const onMcp = methods.filter((m) => JSON.stringify(m.Properties.ResourceId).includes(mcp));
    expect(onMcp.map((m) => [m.Properties.HttpMethod, m.Properties.ApiKeyRequired ?? false])).toEqual([['ANY', false]]);
    const uri = JSON.stringify(onMcp[0]!.Properties.Integration.Uri);
    const [, fn] = Object.entries(api.findResources('AWS::Lambda::Function')).find(([id]) => uri.includes(id))!;
    expect(fn.Properties.Environment.Variables).toMatchObject({ PROVIDER_SECRETS_ARN: expect.anything(), SECRETS_KMS_KEY_ID: expect.anything(), WORKFLOW_QUEUE_URL: expect.anything() });
  });

  it('gives the agents function what tools need (sealed auth, workflow tools) and the platform function sealing only', () => {
    const functions = api.findResources('AWS::Lambda::Function');
    const [agentsId, agents] = Object.entries(functions).find(([id]) => id.startsWith('AgentsFunction'))!;
    const [platformId, platform] = Object.entries(functions).find(([id]) => id.startsWith('PlatformFunction'))!;
    expect(agents.Properties.Environment.Variables.SECRETS_KMS_KEY_ID).toBeDefined();
    expect(agents.Properties.Environment.Variables.WORKFLOW_QUEUE_URL).toBeDefined();
    expect(platform.Properties.Environment.Variables.SECRETS_KMS_KEY_ID).toBeDefined();
    const kmsOf = (fnId: string) => {
      const role = (functions[fnId]!.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      return Object.values(api.findResources('AWS::IAM::Policy'))
        .filter((p) => (p.Properties.Roles as Array<{ Ref: string }>).some((r) => r.Ref === role))
        .flatMap((p) => p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[] }>)
        .flatMap((s) => [s.Action].flat())
        .filter((a) => a.startsWith('kms:'))
        .sort();
    };
    expect(kmsOf(agentsId)).toEqual(['kms:Decrypt', 'kms:GenerateDataKey']);
    expect(kmsOf(platformId)).toEqual(['kms:GenerateDataKey']);
    // Workflows seal the auth of http and tool steps when written (and open signed hooks' secrets); the steps worker opens step auth to call.
    const [workflowsId] = Object.entries(functions).find(([id]) => id.startsWith('WorkflowsFunction'))!;
    const [workerId, worker] = Object.entries(functions).find(([id]) => id.startsWith('WorkflowStepsWorker'))!;
    expect(kmsOf(workflowsId)).toEqual(['kms:Decrypt', 'kms:GenerateDataKey']);
    expect(kmsOf(workerId)).toEqual(['kms:Decrypt']);
    // The webhook worker opens each webhook's secret to sign, and is fed by its own queue.
    const [webhookId, webhooks] = Object.entries(functions).find(([id]) => id.startsWith('WebhookWorker'))!;
    expect(kmsOf(webhookId)).toEqual(['kms:Decrypt']);
    expect(webhooks.Properties.Environment.Variables).toMatchObject({ WEBHOOK_QUEUE_URL: expect.anything(), SECRETS_KMS_KEY_ID: expect.anything() });
    api.hasResourceProperties('AWS::Lambda::EventSourceMapping', { FunctionName: { Ref: webhookId }, FunctionResponseTypes: ['ReportBatchItemFailures'] });
    expect(worker.Properties.Environment.Variables.SECRETS_KMS_KEY_ID).toBeDefined();
    // Its 5 minutes hold the longest step and stay under the queue's 6-minute visibility.
    expect(worker.Properties.Timeout).toBe(300);
    // An execution's event stream lasts up to 10 minutes.
    expect(functions[workflowsId]!.Properties.Timeout).toBe(660);
  });

  it('keeps workflow schedules in a group of its own, sent to the steps queue by a role that may do only that', () => {
    api.resourceCountIs('AWS::Scheduler::ScheduleGroup', 1);
    const roles = api.findResources('AWS::IAM::Role');
    const [roleId] = Object.entries(roles).find(([, r]) => JSON.stringify(r.Properties.AssumeRolePolicyDocument).includes('scheduler.amazonaws.com'))!;
    const statementsOf = (roleRef: string) =>
      Object.values(api.findResources('AWS::IAM::Policy'))
        .filter((p) => (p.Properties.Roles as Array<{ Ref: string }>).some((r) => r.Ref === roleRef))
        .flatMap((p) => p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>);
    expect(statementsOf(roleId).flatMap((s) => [s.Action].flat()).sort()).toEqual(['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage']);
    const functions = api.findResources('AWS::Lambda::Function');
    for (const prefix of ['WorkflowsFunction', 'PlatformFunction']) {
      const [, fn] = Object.entries(functions).find(([id]) => id.startsWith(prefix))!;
      expect(fn.Properties.Environment.Variables).toMatchObject({ SCHEDULE_GROUP_NAME: expect.anything(), SCHEDULER_ROLE_ARN: expect.anything(), WORKFLOW_QUEUE_ARN: expect.anything() });
      const role = (fn.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      const actions = statementsOf(role).flatMap((s) => [s.Action].flat());
      expect(actions).toEqual(expect.arrayContaining(['scheduler:CreateSchedule', 'scheduler:UpdateSchedule', 'scheduler:DeleteSchedule', 'iam:PassRole']));
      expect(actions.filter((a) => a.startsWith('scheduler:'))).toHaveLength(3);
    }
  });

  it('runs tenants’ code in a function of its own that may only write its logs, invoked by the functions that run or check code', () => {
    const functions = api.findResources('AWS::Lambda::Function');
    const [runnerId, runner] = Object.entries(functions).find(([, fn]) => fn.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME === 'code-runner')!;
    const env = runner.Properties.Environment.Variables as Record<string, unknown>;
    // No table, queue, key or secret in its environment.
    expect(Object.keys(env).filter((k) => /TABLE|QUEUE|KMS|SECRET|BUCKET/.test(k))).toEqual([]);
    const roleId = (runner.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0]!;
    const own = Object.values(api.findResources('AWS::IAM::Policy')).filter((p) => (p.Properties.Roles as Array<{ Ref: string }>).some((r) => r.Ref === roleId));
    const actions = own.flatMap((p) => (p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[] }>).flatMap((st) => [st.Action].flat()));
    expect([...new Set(actions)].sort()).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
    const callers = Object.entries(functions).filter(([, fn]) => fn.Properties.Environment?.Variables?.CODE_RUNNER_FUNCTION);
    expect(callers.map(([, fn]) => fn.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME as string).sort()).toEqual(['agents', 'mcp', 'platform', 'workflow-steps', 'workflows']);
    for (const [, fn] of callers) expect(fn.Properties.Environment.Variables.CODE_RUNNER_FUNCTION).toEqual({ Ref: runnerId });
    const invokes = Object.values(api.findResources('AWS::IAM::Policy')).flatMap((p) => p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>).filter((st) => [st.Action].flat().includes('lambda:InvokeFunction'));
    expect(invokes.length).toBeGreaterThanOrEqual(5);
    expect(invokes.every((st) => JSON.stringify(st.Resource).includes(runnerId))).toBe(true);
  });

  it('runs the sweeper every five minutes, able to send to both queues', () => {
    const functions = api.findResources('AWS::Lambda::Function');
    const [sweeperId] = Object.entries(functions).find(([id]) => id.startsWith('Sweeper'))!;
    api.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(5 minutes)',
      Targets: Match.arrayWith([Match.objectLike({ Arn: { 'Fn::GetAtt': [sweeperId, 'Arn'] } })]),
    });
    const env = functions[sweeperId]!.Properties.Environment.Variables;
    expect(env.INGESTION_QUEUE_URL).toBeDefined();
    expect(env.WORKFLOW_QUEUE_URL).toBeDefined();
  });

  it('feeds the ingestion worker from the ingestion queue with partial batch failure reporting', () => {
    api.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: 1,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 5 },
    });
    const functions = Object.values(api.findResources('AWS::Lambda::Function'));
    const senders = functions.filter((f) => f.Properties.Environment.Variables.INGESTION_QUEUE_URL);
    expect(senders).toHaveLength(3); // the knowledge-sources API, the worker itself and the sweeper
    const worker = functions.find((f) => f.Properties.Timeout === 600 && f.Properties.Environment.Variables.INGESTION_QUEUE_URL)!;
    expect(worker.Properties.Environment.Variables.SECRETS_KMS_KEY_ID).toBeDefined();
    // The queue's visibility is six times the worker's timeout.
    const queues = Object.values(data.findResources('AWS::SQS::Queue')).map((q) => q.Properties.VisibilityTimeout).filter(Boolean);
    expect(queues).toContain(3600);
  });

  it('grants the ingestion worker read-only access to the buckets the context names for s3 sources, and tells both functions the list', () => {
    const granted = variant({ s3SourceBuckets: 'acme-handbooks,acme-policies' });
    const template = Template.fromStack(granted.api);
    const functions = template.findResources('AWS::Lambda::Function');
    const lists = Object.values(functions)
      .map((f) => f.Properties.Environment?.Variables?.S3_SOURCE_BUCKETS)
      .filter((v) => v !== undefined);
    expect(lists).toEqual(['acme-handbooks,acme-policies', 'acme-handbooks,acme-policies']);
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Action: 's3:GetObject', Resource: [{ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::acme-handbooks/*']] }, { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::acme-policies/*']] }] }),
        ]),
      },
    });
    // Without the context no bucket is granted.
    expect(JSON.stringify(api.toJSON())).not.toContain(':s3:::acme');
    expect(() => variant({ s3SourceBuckets: 'Not_A_Bucket' })).toThrow(/not an S3 bucket name/);
  });

  it('keeps files in a private, encrypted, TLS-only, retained bucket that drops abandoned uploads; the API writes it, the worker reads it', () => {
    data.hasResource('AWS::S3::Bucket', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({
        BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
        PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
        LifecycleConfiguration: { Rules: Match.arrayWith([Match.objectLike({ Prefix: 'uploads/', ExpirationInDays: 2, Status: 'Enabled' })]) },
      }),
    });
    data.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
    api.hasResourceProperties('AWS::ApiGateway::RestApi', { BinaryMediaTypes: ['multipart/form-data'] });
    const functions = api.findResources('AWS::Lambda::Function');
    const policies = Object.values(api.findResources('AWS::IAM::Policy'));
    const s3ActionsOf = (fnId: string) => {
      const role = (functions[fnId]!.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
      return new Set(
        policies
          .filter((p) => (p.Properties.Roles as Array<{ Ref: string }>).some((r) => r.Ref === role))
          .flatMap((p) => p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[] }>)
          .flatMap((st) => [st.Action].flat())
          .filter((a) => a.startsWith('s3:')),
      );
    };
    const withBucket = Object.keys(functions).filter((id) => functions[id]!.Properties.Environment?.Variables?.BLOB_BUCKET);
    expect(withBucket.map((id) => functions[id]!.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME).sort()).toEqual(['ingestion', 'knowledge-sources']);
    for (const id of withBucket) {
      const actions = s3ActionsOf(id);
      const service = functions[id]!.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME;
      expect(actions.has('s3:GetObject') && actions.has('s3:DeleteObject') && actions.has('s3:ListBucket')).toBe(true);
      // Only the API writes (and signs upload URLs); the worker reads and deletes.
      expect(actions.has('s3:PutObject')).toBe(service === 'knowledge-sources');
    }
  });

  it('keeps a rotating KMS key for sealing credentials, granted only GenerateDataKey and Decrypt', () => {
    data.hasResource('AWS::KMS::Key', { DeletionPolicy: 'Retain', Properties: Match.objectLike({ EnableKeyRotation: true }) });
    const kmsActions = Object.values(api.findResources('AWS::IAM::Policy'))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[] }>)
      .flatMap((st) => [st.Action].flat())
      .filter((a) => a.startsWith('kms:'));
    expect([...new Set(kmsActions)].sort()).toEqual(['kms:Decrypt', 'kms:GenerateDataKey']);
  });

  it('ships each function its own code: the handler file and its chunks, the docs function with Swagger UI beside them', () => {
    const functions = Object.values(api.findResources('AWS::Lambda::Function'));
    const assetDirs = functions.map((fn) => join((built.api.node.root as App).outdir, `asset.${(fn.Properties.Code.S3Key as string).replace(/\.zip$/, '')}`));
    // One bundling per entry (CDK would otherwise reuse the first one's for all).
    expect(new Set(assetDirs).size).toBe(functions.length);
    const handlers = assetDirs.map((dir) => readFileSync(join(dir, 'index.mjs'), 'utf8'));
    expect(handlers.every((code) => /export\s*\{[^}]*\bas handler\b/.test(code))).toBe(true);
    // What loads on first use is a file of its own, which a start does not read.
    expect(assetDirs.filter((dir) => existsSync(join(dir, 'chunks'))).length).toBeGreaterThan(5);
    const docs = assetDirs.filter((dir) => existsSync(join(dir, 'swagger-ui', 'swagger-ui-bundle.js')));
    expect(docs).toHaveLength(1);
  });

  it('names every function’s service and the stack’s metrics namespace, which the dashboard and alarms read', () => {
    const functions = Object.entries(api.findResources('AWS::Lambda::Function')).filter(([, fn]) => fn.Properties.Handler === 'index.handler');
    const services = functions.map(([, fn]) => fn.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME as string).sort();
    expect(services).toEqual([...Object.keys(ROUTE_GROUPS), 'code-runner', 'ingestion', 'sweeper', 'webhooks', 'workflow-steps'].sort());
    for (const [, fn] of functions) expect(fn.Properties.Environment.Variables.METRICS_NAMESPACE).toBe('Cairn/CairnApi');
  });

  it('alarms on the API’s 5xx rate, its p99 latency and token spend, and shows them on a dashboard', () => {
    api.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Threshold: 5,
      EvaluationPeriods: 2,
      Metrics: Match.arrayWith([Match.objectLike({ Expression: 'IF(requests >= 20, 100 * errors / requests, 0)' })]),
    });
    api.hasResourceProperties('AWS::CloudWatch::Alarm', { Namespace: 'AWS/ApiGateway', MetricName: 'Latency', ExtendedStatistic: 'p99', Threshold: 10_000, EvaluationPeriods: 3 });
    const [spend] = Object.values(api.findResources('AWS::CloudWatch::Alarm', { Properties: { Threshold: 2_000_000 } }));
    const queries = spend!.Properties.Metrics as Array<{ Id: string; Expression?: string; MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions: Array<{ Value: string }> } } }>;
    expect(queries.find((q) => q.Expression)!.Expression).toBe('FILL(t0, 0) + FILL(t1, 0) + FILL(t2, 0)');
    expect(queries.filter((q) => q.MetricStat).map((q) => [q.MetricStat!.Metric.Namespace, q.MetricStat!.Metric.MetricName, q.MetricStat!.Metric.Dimensions[0]!.Value])).toEqual([
      ['Cairn/CairnApi', 'Tokens', 'agents'],
      ['Cairn/CairnApi', 'Tokens', 'mcp'],
      ['Cairn/CairnApi', 'Tokens', 'workflow-steps'],
    ]);
    const [dashboard] = Object.values(api.findResources('AWS::CloudWatch::Dashboard'));
    // The body is JSON joined around the tokens it references (the API's name, the queues').
    const parts = (dashboard!.Properties.DashboardBody as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
    const body = JSON.parse(parts.map((p) => (typeof p === 'string' ? p : 'token')).join('')) as { widgets: Array<{ properties: { metrics?: unknown[][] } }> };
    const expressions = body.widgets.flatMap((w) => (w.properties.metrics ?? []).flat()).flatMap((m) => (m && typeof m === 'object' && 'expression' in m ? [(m as { expression: string }).expression] : []));
    for (const search of [`SEARCH('{Cairn/CairnApi,service,route} MetricName="Requests"', 'Sum', 300)`, `SEARCH('{Cairn/CairnApi,service,model} MetricName="InputTokens"', 'Sum', 300)`, `SEARCH('{Cairn/CairnApi,service,toolKind} MetricName="ToolCalls"', 'Sum', 300)`]) {
      expect(expressions).toContain(search);
    }
  });

  it('sends every alarm of both stacks to one encrypted, TLS-only topic', () => {
    for (const template of [data, api]) {
      const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm'));
      expect(alarms.length).toBeGreaterThan(1);
      for (const alarm of alarms) expect(JSON.stringify(alarm.Properties.AlarmActions)).toContain('AlarmsTopic');
    }
    data.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: Match.anyValue() });
    data.hasResourceProperties('AWS::SNS::TopicPolicy', { PolicyDocument: Match.objectLike({ Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) }) });
    data.resourceCountIs('AWS::SNS::Subscription', 0);
  });

  it('serves the console from a private bucket through CloudFront (origin access control), with the API behind the same distribution', () => {
    const site = Template.fromStack(built.console!);
    site.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      BucketEncryption: Match.objectLike({ ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] }),
    });
    site.resourceCountIs('AWS::CloudFront::OriginAccessControl', 1);
    // Only CloudFront, for this distribution, may read the files; nothing else is public.
    site.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: Match.objectLike({
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({ Effect: 'Allow', Principal: { Service: 'cloudfront.amazonaws.com' }, Action: 's3:GetObject', Condition: Match.objectLike({ StringEquals: Match.objectLike({ 'AWS:SourceArn': Match.anyValue() }) }) }),
        ]),
      }),
    });
    const distribution = Object.values(site.findResources('AWS::CloudFront::Distribution'))[0]!.Properties.DistributionConfig;
    expect(distribution.ViewerCertificate ?? {}).not.toHaveProperty('MinimumProtocolVersion', 'TLSv1');
    expect(distribution.DefaultCacheBehavior.ViewerProtocolPolicy).toBe('redirect-to-https');
    expect(distribution.DefaultCacheBehavior.FunctionAssociations).toHaveLength(1);
    const behaviors = distribution.CacheBehaviors as Array<{ PathPattern: string; CachePolicyId: string; AllowedMethods: string[]; TargetOriginId: string }>;
    expect(behaviors.map((b) => b.PathPattern).sort()).toEqual(['/mcp', '/platform/*', '/v1/*']);
    const CACHING_DISABLED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
    for (const b of behaviors) {
      expect(b.CachePolicyId).toBe(CACHING_DISABLED);
      expect(b.AllowedMethods).toEqual(expect.arrayContaining(['POST', 'PUT', 'DELETE', 'PATCH']));
    }
    site.hasResourceProperties('AWS::CloudFront::ResponseHeadersPolicy', {
      ResponseHeadersPolicyConfig: Match.objectLike({
        SecurityHeadersConfig: Match.objectLike({ ContentSecurityPolicy: { ContentSecurityPolicy: Match.stringLikeRegexp("^default-src 'self'; script-src 'self';"), Override: true } }),
      }),
    });
    // The build goes up as two copies: hashed assets cached for good, the page revalidated and invalidated.
    const deployments = Object.values(site.findResources('Custom::CDKBucketDeployment')).map((d) => d.Properties);
    expect(deployments.map((d) => d.SystemMetadata?.['cache-control']).sort()).toEqual(['no-cache', 'public, max-age=31536000, immutable']);
    expect(deployments.every((d) => d.DestinationBucketKeyPrefix === 'console/' && d.Prune === false)).toBe(true);
    expect(deployments.find((d) => d.DistributionPaths)?.DistributionPaths).toEqual(['/console/', '/console/index.html']);
    expect(Object.keys(site.toJSON().Outputs ?? {})).toEqual(expect.arrayContaining(['ConsoleUrl']));
  });

  it('serves the console on a custom domain with TLS 1.2 at least when given one and its certificate, cdk-nag clean without the default certificate’s finding', () => {
    const certificateArn = 'arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789';
    const custom = variant({ consoleDomain: 'console.example.com', consoleCertificateArn: certificateArn });
    const site = Template.fromStack(custom.console!);
    site.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        Aliases: ['console.example.com'],
        ViewerCertificate: { AcmCertificateArn: certificateArn, MinimumProtocolVersion: 'TLSv1.2_2021', SslSupportMethod: 'sni-only' },
      }),
    });
    expect(site.toJSON().Outputs.ConsoleUrl.Value).toBe('https://console.example.com/console/');
    const report = new AwsSolutionsChecks(custom.app).validateScope(custom.app);
    expect(report.violations).toEqual([]);
    // Passed on its merits: nothing acknowledges the TLS rule here.
    const acknowledged = custom.console!.node.findAll().flatMap((c) => c.node.metadata.filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY));
    expect(JSON.stringify(acknowledged)).toContain('AwsSolutions-CFR1');
    expect(JSON.stringify(acknowledged)).not.toContain('AwsSolutions-CFR4');
    // Both or neither, and the certificate where CloudFront reads them.
    expect(() => variant({ consoleDomain: 'console.example.com' })).toThrow(/consoleCertificateArn/);
    expect(() => variant({ consoleDomain: 'not a domain', consoleCertificateArn: certificateArn })).toThrow(/consoleDomain/);
    expect(() => variant({ consoleDomain: 'console.example.com', consoleCertificateArn: certificateArn.replace('us-east-1', 'eu-west-1') })).toThrow(/us-east-1/);
  }, 120_000);

  it('leaves the console out with -c console=false', () => {
    expect(variant({ console: 'false' }).console).toBeUndefined();
  }, 120_000);

  it('passes cdk-nag AwsSolutions with every acknowledged finding carrying a reason', () => {
    const report = new AwsSolutionsChecks(built.app).validateScope(built.app);
    expect(report.violations.map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.resourceLogicalId).join(',')}`)).toEqual([]);
    expect(report.success).toBe(true);
  });
});

describe('CDK app with tracing on', () => {
  const adot = 'arn:aws:lambda:us-east-1:901920570463:layer:aws-otel-nodejs-arm64-ver-1-30-2:1';

  it('is off by default: no X-Ray, no layer', () => {
    const built = variant({});
    for (const fn of Object.values(Template.fromStack(built.api).findResources('AWS::Lambda::Function'))) {
      expect(fn.Properties.TracingConfig).toBeUndefined();
      expect(fn.Properties.Layers).toBeUndefined();
    }
  }, 120_000);

  it('gives every function X-Ray active tracing and the ADOT layer with one context flag, cdk-nag still clean', () => {
    const built = variant({ tracing: 'true', adotLayerArn: adot });
    const functions = Object.values(Template.fromStack(built.api).findResources('AWS::Lambda::Function'));
    expect(functions.length).toBeGreaterThan(5);
    for (const fn of functions) {
      expect(fn.Properties.TracingConfig).toEqual({ Mode: 'Active' });
      expect(fn.Properties.Layers).toEqual([adot]);
      expect(fn.Properties.Environment.Variables.AWS_LAMBDA_EXEC_WRAPPER).toBe('/opt/otel-handler');
    }
    const report = new AwsSolutionsChecks(built.app).validateScope(built.app);
    expect(report.violations.map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.resourceLogicalId).join(',')}`)).toEqual([]);
  }, 120_000);

  it('takes alarm thresholds and an alarm address from context, and refuses a threshold that is not a number', () => {
    const built = variant({ p99LatencyMs: '5000', alarmEmail: 'ops@example.com' });
    Template.fromStack(built.api).hasResourceProperties('AWS::CloudWatch::Alarm', { ExtendedStatistic: 'p99', Threshold: 5000 });
    Template.fromStack(built.data).hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com' });
    expect(() => variant({ tokensPerHour: 'lots' })).toThrow(/tokensPerHour/);
  }, 120_000);

  it('names the missing layer ARN when tracing is asked for without it', () => {
    expect(() => variant({ tracing: 'true' })).toThrow(/adotLayerArn/);
  }, 120_000);
});
