import type { Gateway } from './gateway';
import type { ModelResolver } from './models/types';
import type { PlatformSecrets } from './platform/platform-secrets';
import type { IngestionMessage, StepMessage } from './queue/messages';
import type { Queue } from './queue/queue';
import type { SecretBox } from './secrets/secret-box';
import type { Store } from './store';

/** Time, passed in so that code waiting on it can be tested without waiting. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A trace as `GET /v1/traces/{requestId}` shows it. */
export interface TraceView {
  traceId: string;
  /** The tenant whose request began the trace. */
  tenantId?: string;
  spans: Array<{ spanId: string; parentSpanId?: string; name: string; startTime: string; durationMs: number; status: 'ok' | 'error'; attributes: Record<string, unknown> }>;
}

/** Recent traces kept in this process (local mode); in AWS they go to the configured backend. */
export interface TraceStore {
  byRequestId(requestId: string): TraceView | undefined;
}

/**
 * Everything the product's code reaches outside itself, built once per adapter (the Lambda entry
 * points, the local server, each test file) and passed in. Nothing is swapped at run time.
 */
export interface Runtime {
  readonly store: Store;
  readonly queues: {
    readonly ingestion: Queue<IngestionMessage>;
    readonly workflowSteps: Queue<StepMessage>;
  };
  /** Seals and opens stored secrets (source credentials). */
  readonly secrets: SecretBox;
  /** The platform's admin token and token-signing key. */
  readonly platformSecrets: () => Promise<PlatformSecrets>;
  readonly models: ModelResolver;
  /** API Gateway's side of provisioned API keys (AWS). */
  readonly gateway: Gateway;
  readonly clock: Clock;
  /** Recent traces, where this process keeps them (local mode). */
  readonly traces?: TraceStore;
}
