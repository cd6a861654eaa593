import type { CodeRunner } from './code/code-job';
import type { Blobs } from './blobs/blobs';
import { BoundedCache } from './bounded-cache';
import type { Clock } from './clock';
import type { Gateway } from './gateway';
import { CircuitBreakers } from './models/circuit-breaker';
import type { ModelResolver } from './models/types';
import type { OutboundPolicy } from './net/outbound';
import type { PlatformSecrets } from './platform/platform-secrets';
import type { IngestionMessage, StepsQueueMessage, WebhookMessage } from './queue/messages';
import type { Queue } from './queue/queue';
import type { SecretBox } from './secrets/secret-box';
import type { Store } from './store';
import type { TenantScope } from './tenancy';

/** An MCP server's tool as its list gives it. */
export interface McpListedTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

/**
 * What a warm instance keeps between requests, each bounded in entries (and in time where what is
 * kept can change), held by the runtime: nothing is cached in a module.
 */
export interface RuntimeCaches {
  /** MCP servers' tool lists, by tenant, URL and auth: kept 30 s, at most 500 servers. */
  readonly mcpToolLists: BoundedCache<McpListedTool[]>;
  /** Remote A2A agents' cards, by tenant, card URL and auth: kept 5 minutes, at most 500. */
  readonly a2aCards: BoundedCache<unknown>;
  /** Query embeddings, by model and text (a question asked again, or of several sources, is embedded once): at most 1,000. */
  readonly queryVectors: BoundedCache<Float32Array>;
  /**
   * Aliases and versions of agents and workflows, as releases read them: an alias kept 5 s (a move
   * reaches every instance within it), a version 60 s (immutable; a deleted one goes within it), at
   * most 1,000 aliases and 100 versions (a version holds a whole definition).
   */
  readonly releaseAliases: BoundedCache<unknown>;
  readonly releaseVersions: BoundedCache<unknown>;
  /** Tenants' default guardrails, read by every guarded turn: kept 30 s (a change reaches every instance within it). */
  readonly tenantGuardrails: BoundedCache<unknown>;
  /** Tenants' end-user identity providers, read by every request that names an end user: kept 30 s. */
  readonly endUserAuth: BoundedCache<unknown>;
  /** Identity providers' key sets (jose's remote sets, which refresh themselves), by tenant and URL: at most 500, an hour. */
  readonly endUserJwks: BoundedCache<unknown>;
  /** Circuit breakers of the models this instance calls, on the runtime's clock. */
  readonly modelBreakers: CircuitBreakers;
}

export function runtimeCaches(clock: Clock): RuntimeCaches {
  return {
    mcpToolLists: new BoundedCache(clock, 500, 30_000),
    a2aCards: new BoundedCache(clock, 500, 300_000),
    queryVectors: new BoundedCache(clock, 1000),
    releaseAliases: new BoundedCache(clock, 1000, 5_000),
    releaseVersions: new BoundedCache(clock, 100, 60_000),
    tenantGuardrails: new BoundedCache(clock, 1000, 30_000),
    endUserAuth: new BoundedCache(clock, 1000, 30_000),
    endUserJwks: new BoundedCache(clock, 500, 3_600_000),
    modelBreakers: new CircuitBreakers(clock),
  };
}

/** A trace as `GET /v1/traces/{requestId}` shows it. */
export interface TraceView {
  traceId: string;
  /** The tenant whose request began the trace. */
  tenantId?: string;
  spans: Array<{ spanId: string; parentSpanId?: string; name: string; startTime: string; durationMs: number; status: 'ok' | 'error'; attributes: Record<string, unknown>; events?: Array<{ name: string; attributes: Record<string, unknown> }> }>;
}

/** Recent traces kept in this process (local mode); in AWS they go to the configured backend. */
export interface TraceStore {
  byRequestId(requestId: string): TraceView | undefined;
}

/** What a workflow's `agent` step asks of one agent turn. */
export interface AgentTurnInput {
  message: string;
  sessionId?: string;
  userId?: string;
  /** The end user's groups (documents they may read), and whether a token verified them. */
  userGroups?: string[];
  userVerified?: boolean;
  /** Named by the step, not verified or claimed by the caller: never uses their connected accounts. */
  userNamed?: boolean;
  keyId?: string;
}

/** A finished turn (`completed`), one its guardrails refused (`blocked`: the reply is the blocked message), or one that stopped for a person to approve tool calls (`requires_action`). */
export interface AgentTurnResult {
  status: 'completed' | 'blocked' | 'requires_action';
  agentId: string;
  sessionId: string;
  reply: string;
  model: string;
  /** The agent definition that answered: a version number, or draft. */
  agentVersion: number | 'draft';
  sources: unknown[];
  usage: { inputTokens: number; outputTokens: number };
  toolCalls?: unknown[];
  pendingToolCalls?: Array<{ tool: string }>;
  output?: unknown;
}

/**
 * One agent turn, for workflow `agent` steps. Passed in by the functions that run steps: agents
 * (whose tools may run workflows) sit above workflows, which reach them only through this.
 */
export type AgentTurn = (rt: Runtime, scope: TenantScope, agentId: string, input: AgentTurnInput, signal: AbortSignal) => Promise<AgentTurnResult>;

/** What a background `agent` step starts: a run whose end sends the step's message again (`parent`). */
export interface AgentRunInput extends AgentTurnInput {
  fallbackModels?: string[];
  parent: { workflowId: string; executionId: string; stepId: string };
}

/** A run as a waiting step sees it: still going, or ended with a turn's result or an error. */
export type AgentRunState =
  | { ended: false; status: string }
  | { ended: true; status: 'completed'; result: AgentTurnResult & { runId: string } }
  | { ended: true; status: string; error: { code: string; message: string } };

/** Background runs, for `agent` steps with `background: true` (passed in as agentTurn is). */
export interface AgentRuns {
  start(rt: Runtime, scope: TenantScope, agentId: string, input: AgentRunInput): Promise<{ agentId: string; runId: string; sessionId: string }>;
  state(rt: Runtime, scope: TenantScope, agentId: string, runId: string): Promise<AgentRunState>;
  cancel(rt: Runtime, scope: TenantScope, agentId: string, runId: string): Promise<void>;
}

/** A workflow's schedule as the scheduler keeps it. */
export interface ScheduleSpec {
  cron: string;
  timezone: string;
  enabled: boolean;
}

/**
 * Where workflows' schedules live: EventBridge Scheduler in AWS, the table (read by an in-process
 * ticker) in local mode. `put` replaces a workflow's schedules (`previous`: how many it had).
 */
export interface Scheduler {
  put(scope: TenantScope, workflowId: string, schedules: ScheduleSpec[], previous: number): Promise<void>;
}

/**
 * Everything the product's code reaches outside itself, built once per adapter (the Lambda entry
 * points, the local server, each test file) and passed in. Nothing is swapped at run time.
 */
export interface Runtime {
  readonly store: Store;
  readonly queues: {
    readonly ingestion: Queue<IngestionMessage>;
    readonly workflowSteps: Queue<StepsQueueMessage>;
    readonly webhooks: Queue<WebhookMessage>;
  };
  /** Files' content (the product's bucket) and the buckets `s3` sources read. */
  readonly blobs: Blobs;
  /** Seals and opens stored secrets (source credentials). */
  readonly secrets: SecretBox;
  /** The platform's admin token and token-signing key. */
  readonly platformSecrets: () => Promise<PlatformSecrets>;
  readonly models: ModelResolver;
  /** API Gateway's side of provisioned API keys (AWS). */
  readonly gateway: Gateway;
  readonly clock: Clock;
  readonly caches: RuntimeCaches;
  /** Recent traces, where this process keeps them (local mode). */
  readonly traces?: TraceStore;
  /** Workflows' schedules (the functions that write workflows, local mode). */
  readonly scheduler: Scheduler;
  /** Agent turns, where workflow steps run (the steps worker, local mode). */
  readonly agentTurn?: AgentTurn;
  /** Background runs, where workflow steps run (the steps worker, local mode). */
  readonly agentRuns?: AgentRuns;
  /** Tenants' code (code steps, code tools, checks of a source on write): the code-runner function in AWS, worker threads locally. */
  readonly code?: CodeRunner;
  /** What tenant-given URLs and hosts may be called (the deployment's rules, and the server's own services, which never may). */
  readonly outbound: OutboundPolicy;
}

/** The parts an adapter gives a function; the store, the clock and the caches every runtime has. */
export type GivenPart = 'queues' | 'blobs' | 'secrets' | 'platformSecrets' | 'models' | 'gateway' | 'scheduler' | 'agentTurn' | 'agentRuns' | 'code' | 'traces';

/** Only a type: which parts a runtime was given. */
declare const givenParts: unique symbol;

/**
 * A runtime that was given the parts `P`. Each function's entry (an app, a queue's consumer)
 * declares the parts it needs with it, so a Lambda entry that builds its runtime without one of
 * them fails to compile, rather than at run time with "no … in this function".
 */
export type RuntimeWith<P extends GivenPart> = Runtime & { readonly [givenParts]?: { readonly [K in P]: true } };
