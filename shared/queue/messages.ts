/**
 * The messages of the two work queues. Plain data: they cross SQS as JSON, so they carry ids,
 * never records.
 */

/**
 * Ingestion: a `sync` plans the work and fans it out as `batch` messages; `purge` removes a
 * deleted source's index; `compact` merges a source's segments (compaction.ts).
 */
export type IngestionMessage =
  | { type: 'sync'; tenantId: string; sourceId: string; syncId: string }
  | {
      type: 'batch';
      tenantId: string;
      sourceId: string;
      syncId: string;
      batch: number;
      segNo: number;
      paths?: string[];
      range?: { after?: string; upTo: string };
      since?: string;
    }
  | { type: 'purge'; tenantId: string; sourceId: string }
  | { type: 'compact'; tenantId: string; sourceId: string; compactionId: string };

/** The workflow-steps queue: steps to run, and schedules that are due (schedules.ts). */
export type WorkflowMessage = StepMessage | ScheduledMessage;

/** A workflow's schedule is due: start an execution for that time (once). */
export interface ScheduledMessage {
  type: 'scheduled';
  tenantId: string;
  workflowId: string;
  /** Its position in the workflow's `schedules`. */
  schedule: number;
  /** The scheduled time (ISO 8601); EventBridge Scheduler fills it in. */
  at: string;
}

/** An evaluation run's case: run the target on it and score the reply (shared/evals). It travels on the steps queue. */
export interface EvalCaseMessage {
  type: 'eval-case';
  tenantId: string;
  runId: string;
  /** The run's dataset, so the case is read beside the run (absent on messages sent before it travelled). */
  datasetId?: string;
  /** The case's position in its dataset. */
  position: number;
  /** A workflow case: the execution it started, read again on each delivery until it finishes. */
  execution?: { workflowId: string; id: string; polls: number };
  /** The case's trace, kept from its first delivery (a workflow case takes several). */
  requestId?: string;
}

/**
 * An exchange's memory, extracted by a model after the turn answered (an agent with
 * `memory.mode: model`). Its reply's id makes it once-only: a redelivery finds the episode.
 */
export interface MemoryMessage {
  type: 'memory';
  tenantId: string;
  agentId: string;
  sessionId: string;
  userId?: string;
  /** The stored reply the exchange ended with. */
  messageId: string;
  /** The user's message as stored (guardrails applied), cut to what extraction reads. */
  text: string;
  reply: string;
  /** When the message was asked (epoch ms). */
  at: number;
  /** The model that extracts (`provider/model`, or a bare name). */
  model: string;
  keyId?: string;
  /** The agent release the turn ran, for usage. */
  release: number | 'draft';
}

/** One step of an agent's background run: a model call, or the round of tool calls the model asked for. */
export interface RunMessage {
  type: 'run';
  tenantId: string;
  agentId: string;
  runId: string;
  /** The run's position the step is for: a message for another position is a duplicate, or late. */
  step: number;
  phase: 'model' | 'tools';
}

/** What the steps queue carries: workflow work, evaluation cases, memory extraction and background runs' steps. */
export type StepsQueueMessage = WorkflowMessage | EvalCaseMessage | MemoryMessage | RunMessage;

/** Workflow steps: run one step of one execution. */
export interface StepMessage {
  type: 'step';
  tenantId: string;
  workflowId: string;
  executionId: string;
  stepId: string;
  /** One item of a `map` step, by position. */
  item?: number;
}

/** Completion webhooks: deliver one event of one execution (webhooks.ts). */
export interface WebhookMessage {
  type: 'deliver';
  tenantId: string;
  workflowId: string;
  executionId: string;
  /** The delivery's key among the execution's: `<event>` or `waiting.<stepId>`. */
  delivery: string;
}
