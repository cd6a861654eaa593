import { z } from 'zod';

/**
 * The only reader of process.env. Validated once at start-up; a bad value fails fast and names the
 * variable instead of surfacing later as a confusing runtime error.
 */
const plans = ['free', 'pro', 'enterprise', 'unlimited'] as const;

/**
 * One environment variable: its value when unset, and its schema, built only when it is set. Most
 * are unset in any one deployment, and building all of their schemas at every cold start cost more
 * than anything else a function does before its first request.
 */
interface Variable<T> {
  fallback: T;
  schema: () => z.ZodType<T>;
}
const optional = <T>(schema: () => z.ZodType<T>): Variable<T | undefined> => ({ fallback: undefined, schema });
const withDefault = <T>(fallback: NoInfer<T>, schema: () => z.ZodType<T>): Variable<T> => ({ fallback, schema });

/** A variable holding JSON, checked against `shape`. */
function jsonOf<T extends z.ZodType>(shape: T) {
  return z
    .string()
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be JSON' });
        return z.NEVER;
      }
    })
    .pipe(shape);
}

/** Provider names: lowercase, as they lead model names (`vllm/llama-3`); `local` is the built-in engine's. */
const PROVIDER_NAME = /^[a-z][a-z0-9-]{0,39}$/;

function modelProviders() {
  /** What a provider's calls may take before the next model of a chain is tried. */
  const timeoutMs = z.int().min(100).max(900_000).optional();
  /** Whether requests mark their stable prefix cacheable (default: where the provider and model support it). */
  const promptCaching = z.boolean().optional();
  /** Models to list for the platform admin (any model of the provider may be named). */
  const models = z.array(z.string().min(1).max(200)).max(100).optional();
  /** The models' context window in tokens (default: known windows of common models, else 8,192), and per model. */
  const contextWindow = z.int().min(1024).max(10_000_000).optional();
  const contextWindows = z.record(z.string().min(1).max(200), z.int().min(1024).max(10_000_000)).optional();
  const providerSettings = z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('openai-compatible'), baseUrl: z.url(), apiKey: z.string().min(1).optional(), timeoutMs, promptCaching, models, contextWindow, contextWindows }),
    z.strictObject({ type: z.literal('anthropic'), baseUrl: z.url().default('https://api.anthropic.com'), apiKey: z.string().min(1).optional(), timeoutMs, promptCaching, models, contextWindow, contextWindows }),
    z.strictObject({ type: z.literal('bedrock'), region: z.string().min(1), endpoint: z.url().optional(), timeoutMs, promptCaching, models, contextWindow, contextWindows }),
  ]);
  return z.record(
    z.string().regex(PROVIDER_NAME, 'names must be lowercase letters, digits and dashes').refine((n) => n !== 'local', 'local is the built-in engine'),
    providerSettings,
  );
}
export type ProviderSettings = z.infer<ReturnType<typeof modelProviders>>[string];

const variables = {
  TABLE_NAME: withDefault('cairn', () => z.string().min(1)),
  AWS_REGION: withDefault('us-east-1', () => z.string().min(1)),
  /** Megabytes of search-index items (postings, norms, chunks of live segments) a process keeps between searches; 0 turns it off. */
  SEARCH_CACHE_MB: withDefault(64, () => z.coerce.number().int().min(0).max(4096)),
  /** Set for DynamoDB Local; unset in AWS. Local mode starts its own when unset. */
  DYNAMODB_ENDPOINT: optional(() => z.url()),
  /** 0 picks a free port (tests); the banner shows the one in use. */
  PORT: withDefault(3000, () => z.coerce.number().int().min(0).max(65535)),
  /** Local mode: where DynamoDB Local and generated secrets persist; ':memory:' keeps nothing. */
  DATA_DIR: withDefault('.data', () => z.string().min(1)),
  DEV_API_KEY: optional(() => z.string().min(16, 'must be at least 16 characters')),
  DEV_API_KEY_PLAN: withDefault('free', () => z.enum(plans)),
  PLATFORM_ADMIN_TOKEN: optional(() => z.string().min(16, 'must be at least 16 characters')),
  /** HMAC key that signs pagination cursors (local mode generates and keeps one; the CDK stack sets it). */
  CURSOR_SIGNING_KEY: optional(() => z.string().min(32, 'must be at least 32 characters')),
  /** HMAC key that signs platform access tokens (local mode generates and keeps one). */
  PLATFORM_TOKEN_KEY: optional(() => z.string().min(32, 'must be at least 32 characters')),
  /** AWS: the Secrets Manager secrets holding the admin token and the token-signing key. */
  PLATFORM_ADMIN_TOKEN_SECRET_ARN: optional(() => z.string().min(1)),
  PLATFORM_TOKEN_KEY_SECRET_ARN: optional(() => z.string().min(1)),
  /** Lifetime of issued platform access tokens; 0 issues tokens that only revocation ends. */
  PLATFORM_TOKEN_TTL_SECONDS: withDefault(30 * 86400, () => z.coerce.number().int().min(0).max(366 * 86400)),
  /** AWS: usage plans are named <prefix><plan>; provisioned tenants' keys join theirs so API Gateway accepts them. */
  USAGE_PLAN_NAME_PREFIX: optional(() => z.string().min(1).max(100)),
  /** An API Gateway control-plane-compatible endpoint (tests). */
  API_GATEWAY_ENDPOINT: optional(() => z.url()),
  LOG_LEVEL: withDefault('info', () => z.enum(['debug', 'info', 'warn', 'error', 'silent'])),
  /** The `service` of every log line and metric: the CDK names each function's route group; local mode is `cairn`. */
  POWERTOOLS_SERVICE_NAME: withDefault('cairn', () => z.string().min(1).max(100)),
  /** Set by Lambda: metrics default on there. */
  AWS_LAMBDA_FUNCTION_NAME: optional(() => z.string().min(1)),
  /** `emf`: CloudWatch metrics as Embedded Metric Format log lines (the default in Lambda); `off` (the default elsewhere). */
  METRICS: optional(() => z.enum(['emf', 'off'])),
  /** The CloudWatch namespace of the metrics (the CDK sets one per stack, which its dashboard and alarms read). */
  METRICS_NAMESPACE: withDefault('Cairn', () => z.string().min(1).max(255)),
  /** How long a Lambda instance trusts a resolved API key; revocation takes effect within it. */
  API_KEY_CACHE_SECONDS: withDefault(30, () => z.coerce.number().int().min(0).max(3600)),
  /**
   * `true`: a function loads as it starts what it otherwise loads on first use (its route
   * sections, each kind of queued work): for provisioned concurrency, whose start is paid before
   * any request.
   */
  PRELOAD: withDefault('false', () => z.enum(['true', 'false'])),
  /** Hosts tools may call whatever they resolve to (comma-separated names or addresses). */
  TOOL_ALLOWED_HOSTS: withDefault('', () => z.string()),
  /** Let tools call private, loopback and link-local addresses (tests and local demos only). */
  TOOL_ALLOW_PRIVATE_NETWORKS: withDefault('false', () => z.enum(['true', 'false'])),
  /** Set by Lambda: its runtime API's host:port, which no tenant's URL may reach. */
  AWS_LAMBDA_RUNTIME_API: optional(() => z.string()),
  /**
   * This API's public base URL (scheme, host, any path prefix such as a stage), for URLs handed to
   * others: OAuth redirect URIs, A2A endpoints. Unset: API Gateway's own domain and stage in AWS,
   * `http://localhost:<port>` locally — never a header a client sends.
   */
  PUBLIC_BASE_URL: optional(() => z.url({ protocol: /^https?$/ }).max(2000).transform((url) => url.replace(/\/+$/, ''))),
  /** Browser origins allowed to call the API: a comma-separated list, or `*`; empty (the default): no browser access. */
  CORS_ORIGINS: withDefault('', () => z.string()),
  /** SQS queue of ingestion work (AWS); unset: local mode's queue stored in the table. */
  INGESTION_QUEUE_URL: optional(() => z.url()),
  /** SQS queue of workflow steps (AWS); unset: local mode's queue stored in the table. */
  WORKFLOW_QUEUE_URL: optional(() => z.url()),
  /** SQS queue of completion webhook deliveries (AWS); unset: local mode's queue stored in the table. */
  WEBHOOK_QUEUE_URL: optional(() => z.url()),
  /** Seconds before a failed webhook delivery's second attempt, doubled for each later one (at most 900). */
  WEBHOOK_RETRY_BASE_SECONDS: withDefault(10, () => z.coerce.number().int().min(0).max(900)),
  /** EventBridge Scheduler group of workflows' schedules, the role it sends with and the steps queue's ARN (AWS; the stack sets them). */
  SCHEDULE_GROUP_NAME: optional(() => z.string().min(1)),
  SCHEDULER_ROLE_ARN: optional(() => z.string().min(1)),
  WORKFLOW_QUEUE_ARN: optional(() => z.string().min(1)),
  /** The code-runner function that runs tenants' code (AWS; the stack sets it); unset: local mode's worker threads. */
  CODE_RUNNER_FUNCTION: optional(() => z.string().min(1)),
  /** An EventBridge Scheduler-compatible endpoint (tests). */
  SCHEDULER_ENDPOINT: optional(() => z.url()),
  /** How long a synchronous execute waits before answering 202. */
  WORKFLOW_SYNC_WAIT_MS: withDefault(25_000, () => z.coerce.number().int().min(0).max(28_000)),
  /** An SQS-compatible endpoint (tests); unset in AWS. */
  SQS_ENDPOINT: optional(() => z.url()),
  /** The bucket holding uploaded files' content (AWS: CairnData's; local mode: its own S3-compatible server). */
  BLOB_BUCKET: optional(() => z.string().min(3).max(63)),
  /** An S3-compatible endpoint (local mode, tests); unset in AWS. */
  S3_ENDPOINT: optional(() => z.url()),
  /** Buckets that `s3` knowledge sources may read (the CDK grants them from the context `s3SourceBuckets`); comma-separated. */
  S3_SOURCE_BUCKETS: withDefault('', () => z.string()),
  /** KMS key that wraps the data keys of stored secrets (AWS). */
  SECRETS_KMS_KEY_ID: optional(() => z.string().min(1)),
  OPENAI_API_KEY: optional(() => z.string().min(1)),
  /** Any OpenAI-compatible server (Ollama, vLLM, …); default api.openai.com. */
  OPENAI_BASE_URL: withDefault('https://api.openai.com/v1', () => z.url()),
  /** Cohere's API (rerank models `cohere/…`). */
  COHERE_API_KEY: optional(() => z.string().min(1)),
  COHERE_BASE_URL: withDefault('https://api.cohere.com', () => z.url()),
  ANTHROPIC_API_KEY: optional(() => z.string().min(1)),
  ANTHROPIC_BASE_URL: withDefault('https://api.anthropic.com', () => z.url()),
  /** Bedrock uses the Lambda role's credentials; set to enable `bedrock/…` models. */
  BEDROCK_REGION: optional(() => z.string().min(1)),
  /** A Bedrock-compatible endpoint (tests). */
  BEDROCK_ENDPOINT: optional(() => z.url()),
  /** AWS: a Secrets Manager secret holding {"OPENAI_API_KEY": …, "ANTHROPIC_API_KEY": …}. */
  PROVIDER_SECRETS_ARN: optional(() => z.string().min(1)),
  /** A Secrets Manager-compatible endpoint (tests). */
  SECRETS_MANAGER_ENDPOINT: optional(() => z.url()),
  /**
   * How long work a worker took (a queued message, a workflow step, a sync's planning) stays its
   * own without a heartbeat: after a crash, others take it over this long after the last one.
   */
  WORK_LEASE_SECONDS: withDefault(60, () => z.coerce.number().int().min(1).max(900)),
  /** The sweeper re-drives (then fails) executions and syncs that made no progress for this long. */
  SWEEP_AFTER_SECONDS: withDefault(900, () => z.coerce.number().int().min(1).max(86_400)),
  MODEL_TIMEOUT_MS: withDefault(60_000, () => z.coerce.number().int().min(1000).max(900_000)),
  SESSION_TTL_DAYS: withDefault(30, () => z.coerce.number().int().min(1).max(3650)),
  /** Where the docs function finds Swagger UI's files (set in Lambda; locally from node_modules). */
  DOCS_ASSETS_DIR: optional(() => z.string().min(1)),
  /** Where bare model names (`gpt-4`) go: local, bedrock, openai, anthropic or a provider of MODEL_PROVIDERS. */
  DEFAULT_MODEL_PROVIDER: withDefault('local', () => z.string().regex(PROVIDER_NAME)),
  /**
   * Prices for usage reports' cost estimates, USD per 1,000 tokens by `provider/model`:
   * {"openai/gpt-4o": {"input": 0.0025, "output": 0.01}}. Models not listed show no estimate;
   * the built-in engine (`local/…`) costs nothing.
   */
  MODEL_PRICES: withDefault({}, () =>
    jsonOf(
      z.record(
        z.string().regex(/^[a-z][a-z0-9-]*\/.+$/, 'keys must be provider/model'),
        z.strictObject({ input: z.number().min(0), output: z.number().min(0), cachedInput: z.number().min(0).optional(), cacheWrite: z.number().min(0).optional() }),
      ),
    ),
  ),
  /**
   * Model providers by name, beside the built-in openai, anthropic, bedrock and local:
   * {"vllm": {"type": "openai-compatible", "baseUrl": "http://…/v1"}, "bedrock-eu": {"type": "bedrock", "region": "eu-west-1"}}.
   * `<name>/<model>` then resolves to it. In AWS the CDK context `modelProviders` sets it, and the
   * provider secret's MODEL_PROVIDERS adds to each provider by name (its apiKey).
   */
  MODEL_PROVIDERS: withDefault({}, () => jsonOf(modelProviders())),
};

type Environment = { [K in keyof typeof variables]: (typeof variables)[K] extends Variable<infer T> ? T : never };

/** An issue's message; a record's bad key says what its key schema found, not only that it was bad. */
const problem = (issue: z.core.$ZodIssue): string => (issue.code === 'invalid_key' ? issue.issues.map((i) => i.message).join('; ') : issue.message);

/** The variables of `source`, each checked by its schema; every bad one is named in the error. */
function readEnvironment(source: Record<string, string | undefined>): Environment {
  const env: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, variable] of Object.entries(variables) as Array<[string, Variable<unknown>]>) {
    const value = source[name];
    if (value === undefined) {
      env[name] = variable.fallback;
      continue;
    }
    // Parsed once: zod's compiled fast path would cost more to build than it saves.
    const parsed = variable.schema().safeParse(value, { jitless: true });
    if (parsed.success) env[name] = parsed.data;
    else problems.push(...parsed.error.issues.map((i) => `  ${[name, ...i.path].join('.')}: ${problem(i)}`));
  }
  if (problems.length > 0) throw new Error(`Invalid configuration:\n${problems.join('\n')}`);
  return env as Environment;
}

export type Plan = (typeof plans)[number];
export const PLANS = plans;

/** The configuration `source` (process.env) gives: checked, with defaults applied, frozen. */
export function loadConfig(source: Record<string, string | undefined>) {
  const env = readEnvironment(source);
  if (!['local', 'bedrock', 'openai', 'anthropic'].includes(env.DEFAULT_MODEL_PROVIDER) && !(env.DEFAULT_MODEL_PROVIDER in env.MODEL_PROVIDERS)) {
    throw new Error(`Invalid configuration:\n  DEFAULT_MODEL_PROVIDER: ${env.DEFAULT_MODEL_PROVIDER} is neither a built-in provider nor one of MODEL_PROVIDERS`);
  }
  return Object.freeze({
    tableName: env.TABLE_NAME,
    region: env.AWS_REGION,
    dynamodbEndpoint: env.DYNAMODB_ENDPOINT,
    port: env.PORT,
    dataDir: env.DATA_DIR,
    devApiKey: env.DEV_API_KEY,
    devApiKeyPlan: env.DEV_API_KEY_PLAN,
    platformAdminToken: env.PLATFORM_ADMIN_TOKEN,
    platformTokenKey: env.PLATFORM_TOKEN_KEY,
    cursorSigningKey: env.CURSOR_SIGNING_KEY,
    platformAdminTokenSecretArn: env.PLATFORM_ADMIN_TOKEN_SECRET_ARN,
    platformTokenKeySecretArn: env.PLATFORM_TOKEN_KEY_SECRET_ARN,
    platformTokenTtlSeconds: env.PLATFORM_TOKEN_TTL_SECONDS,
    usagePlanNamePrefix: env.USAGE_PLAN_NAME_PREFIX,
    apiGatewayEndpoint: env.API_GATEWAY_ENDPOINT,
    logLevel: env.LOG_LEVEL,
    serviceName: env.POWERTOOLS_SERVICE_NAME,
    metrics: env.METRICS ?? (env.AWS_LAMBDA_FUNCTION_NAME ? 'emf' : 'off'),
    metricsNamespace: env.METRICS_NAMESPACE,
    apiKeyCacheSeconds: env.API_KEY_CACHE_SECONDS,
    preload: env.PRELOAD === 'true',
    searchCacheBytes: env.SEARCH_CACHE_MB * 1024 * 1024,
    toolAllowedHosts: env.TOOL_ALLOWED_HOSTS.split(',').map((h) => h.trim().toLowerCase()).filter(Boolean),
    toolAllowPrivateNetworks: env.TOOL_ALLOW_PRIVATE_NETWORKS === 'true',
    lambdaRuntimeApi: env.AWS_LAMBDA_RUNTIME_API,
    corsOrigins: env.CORS_ORIGINS.split(',').map((o) => o.trim()).filter(Boolean),
    publicBaseUrl: env.PUBLIC_BASE_URL,
    defaultModelProvider: env.DEFAULT_MODEL_PROVIDER,
    docsAssetsDir: env.DOCS_ASSETS_DIR,
    ingestionQueueUrl: env.INGESTION_QUEUE_URL,
    sqsEndpoint: env.SQS_ENDPOINT,
    blobBucket: env.BLOB_BUCKET,
    s3Endpoint: env.S3_ENDPOINT,
    s3SourceBuckets: env.S3_SOURCE_BUCKETS.split(',').map((b) => b.trim()).filter(Boolean),
    workflowQueueUrl: env.WORKFLOW_QUEUE_URL,
    webhookQueueUrl: env.WEBHOOK_QUEUE_URL,
    scheduleGroupName: env.SCHEDULE_GROUP_NAME,
    schedulerRoleArn: env.SCHEDULER_ROLE_ARN,
    workflowQueueArn: env.WORKFLOW_QUEUE_ARN,
    schedulerEndpoint: env.SCHEDULER_ENDPOINT,
    codeRunnerFunction: env.CODE_RUNNER_FUNCTION,
    webhookRetryBaseSeconds: env.WEBHOOK_RETRY_BASE_SECONDS,
    workflowSyncWaitMs: env.WORKFLOW_SYNC_WAIT_MS,
    secretsKmsKeyId: env.SECRETS_KMS_KEY_ID,
    openaiApiKey: env.OPENAI_API_KEY,
    openaiBaseUrl: env.OPENAI_BASE_URL,
    cohereApiKey: env.COHERE_API_KEY,
    cohereBaseUrl: env.COHERE_BASE_URL,
    anthropicApiKey: env.ANTHROPIC_API_KEY,
    anthropicBaseUrl: env.ANTHROPIC_BASE_URL,
    bedrockRegion: env.BEDROCK_REGION,
    bedrockEndpoint: env.BEDROCK_ENDPOINT,
    modelTimeoutMs: env.MODEL_TIMEOUT_MS,
    workLeaseMs: env.WORK_LEASE_SECONDS * 1000,
    sweepAfterMs: env.SWEEP_AFTER_SECONDS * 1000,
    providerSecretsArn: env.PROVIDER_SECRETS_ARN,
    secretsManagerEndpoint: env.SECRETS_MANAGER_ENDPOINT,
    sessionTtlDays: env.SESSION_TTL_DAYS,
    modelPrices: env.MODEL_PRICES,
    modelProviders: env.MODEL_PROVIDERS,
  });
}

export const config = loadConfig(process.env);
