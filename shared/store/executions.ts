import { isoNow, type Clock } from '../clock';
import { EventEmitter } from 'node:events';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from './dynamo-commands';
import type { TenantScope } from '../tenancy';
import type { Db } from './db';
import { keys } from './keys';
import { ifConditionHolds } from './conditional';
import { anObject, readItem } from './item-shape';
import { z } from 'zod';
import { gunzipSync, gzipSync } from 'node:zlib';

/**
 * Workflow executions: one item each, steps as a map inside it, so every step transition is one
 * conditional update of one item (a duplicate or late message cannot move a step twice).
 */
const stepStatus = z.lazy(() => z.enum(['pending', 'queued', 'running', 'retrying', 'waiting', 'succeeded', 'failed', 'skipped', 'canceled']));
export type StepStatus = z.infer<typeof stepStatus>;
/** A step in one of these is done: nothing moves it again. */
const FINAL_STEP_STATUSES = new Set<StepStatus>(['succeeded', 'failed', 'skipped', 'canceled']);
/** `waiting`: nothing runs, and a `human` step waits for a person. */
const executionStatus = z.lazy(() => z.enum(['running', 'waiting', 'succeeded', 'failed', 'canceled']));
export type ExecutionStatus = z.infer<typeof executionStatus>;
const failure = z.lazy(() => z.object({ code: z.string(), message: z.string() }));
const tokens = z.lazy(() => z.object({ inputTokens: z.number(), outputTokens: z.number() }));

/** What a waiting `human` step asks for. */
const humanRequestShape = z.lazy(() => z.object({
  prompt: z.string(),
  schema: z.record(z.string(), z.unknown()),
  assignee: z.string().optional(),
  /** Epoch ms after which `onTimeout` applies. */
  expiresAt: z.number().optional(),
}));
export type HumanRequest = z.infer<typeof humanRequestShape>;

/** A running `map` step's progress (the items themselves are items of their own: map-items.ts). */
const mapProgressShape = z.lazy(() => z.object({
  total: z.number(),
  /** Items sent so far (the next to send is at this index). */
  started: z.number(),
  done: z.number(),
  failed: z.number(),
}));
export type MapProgress = z.infer<typeof mapProgressShape>;

const stepStateShape = z.lazy(() => z.object({
  id: z.string(),
  type: z.string(),
  status: stepStatus,
  attempt: z.number(),
  startedAt: z.string().optional(),
  finishedAt: z.string().optional(),
  durationMs: z.number().optional(),
  output: z.unknown().optional(),
  error: failure.optional(),
  /** While running: when another delivery may take the step over (the worker died). */
  leaseUntil: z.number().optional(),
  /** A waiting human step's request (kept after it is completed). */
  request: humanRequestShape.optional(),
  /** Who completed a waiting step: `api` or `timeout` (a person's), `run` (a background agent step's run ended). */
  completedBy: z.enum(['api', 'timeout', 'run']).optional(),
  /** What a code step's code logged (its `console.log` lines). */
  logs: z.array(z.string()).optional(),
  /** A background agent step's run, which the step waits for. */
  run: z.object({ agentId: z.string(), runId: z.string(), sessionId: z.string() }).optional(),
  map: mapProgressShape.optional(),
  /** Taken over from the execution this one re-runs: its output, not run again. */
  reused: z.boolean().optional(),
}));
export type StepState = z.infer<typeof stepStateShape>;
/** The run a background agent step waits for. */
export type AwaitedRun = NonNullable<StepState['run']>;

const executionShape = z.lazy(() => z.object({
  id: z.string(),
  workflowId: z.string(),
  /** The definition it ran: a release's version number, or `draft` (executions before releases: the record version then). */
  workflowVersion: z.union([z.number(), z.literal('draft')]),
  status: executionStatus,
  input: z.string(),
  parameters: z.record(z.string(), z.unknown()),
  output: z.unknown().optional(),
  error: failure.optional(),
  steps: z.record(z.string(), stepStateShape),
  /** The definition the execution started with; a later PUT of the workflow does not change it. */
  definition: z.array(z.looseObject({ id: z.string(), type: z.string(), dependsOn: z.array(z.string()) })),
  usage: tokens,
  /** The API key that started it, for usage accounting. */
  keyId: z.string().optional(),
  /** The end user it acts for (templates' user.*, tool policies, agent steps), when the request named one. */
  user: z.object({ id: z.string(), groups: z.array(z.string()), verified: z.boolean(), named: z.boolean().optional() }).optional(),
  /** Where its completion webhooks go (the execute request's, else the workflow's); the domain seals the secret, the store keeps it as is. */
  webhook: z.object({ url: z.string(), events: z.array(z.enum(['succeeded', 'failed', 'canceled', 'waiting'])), sealed: anObject }).optional(),
  /** The execution this one re-runs, and from which step. */
  rerunOf: z.object({ executionId: z.string(), fromStep: z.string() }).optional(),
  createdAt: z.string(),
  startedAt: z.string(),
  finishedAt: z.string().optional(),
}));
export type ExecutionRecord = z.infer<typeof executionShape>;

/**
 * Every update of an execution rewrites its whole item, and DynamoDB bills a write by the item's
 * size: the step outputs it accumulates (a search step's passages, a generation's text) and its
 * definition made each step's transitions rewrite several KB. Such values of 512 bytes or more of
 * JSON are stored gzipped, as binary (a step's output is JSON: binary that starts as gzip does is
 * packed); reads unpack them, and items written before read as they are.
 */
const PACK_FROM_BYTES = 512;
const packed = (value: unknown): unknown => {
  const json = JSON.stringify(value);
  return json !== undefined && json.length >= PACK_FROM_BYTES ? gzipSync(json) : value;
};
const GZIP_MAGIC = [0x1f, 0x8b];
const unpacked = (value: unknown): unknown =>
  value instanceof Uint8Array && value[0] === GZIP_MAGIC[0] && value[1] === GZIP_MAGIC[1] ? (JSON.parse(gunzipSync(value).toString('utf8')) as unknown) : value;

/** An execution item with its packed values unpacked (the platform's db/ops reads raw items through it too). */
export function unpackExecutionItem(item: Record<string, unknown>): Record<string, unknown> {
  const steps = item.steps as Record<string, Record<string, unknown>> | undefined;
  return {
    ...item,
    ...('definition' in item ? { definition: unpacked(item.definition) } : {}),
    ...('output' in item ? { output: unpacked(item.output) } : {}),
    ...(steps ? { steps: Object.fromEntries(Object.entries(steps).map(([id, step]) => [id, { ...step, ...('output' in step ? { output: unpacked(step.output) } : {}), ...('logs' in step ? { logs: unpacked(step.logs) } : {}) }])) } : {}),
  };
}

const strip = (item: Record<string, unknown>) => readItem(executionShape, unpackExecutionItem(item), 'execution');

export function executionsStore(db: Db, clock: Clock) {
  /**
   * Changes this store made to executions, by execution id: a synchronous execute or an event
   * stream in the process that runs the steps (local mode) hears of them at once; elsewhere they
   * read the record again after a growing pause.
   */
  const changes = new EventEmitter().setMaxListeners(0);
  /** Whether a conditional write held; it is announced with the record as it left it, when the write returns it. */
  async function conditionHeld(command: UpdateCommand): Promise<{ record?: ExecutionRecord } | undefined> {
    const out = await ifConditionHolds(db.client.send(command));
    if (!out) return undefined;
    const record = out.Attributes ? strip(out.Attributes) : undefined;
    changes.emit((command.input.Key as { sk: string }).sk, record);
    return { record };
  }
  /** A conditional write that returns the record (`ReturnValues: 'ALL_NEW'`); undefined when its condition failed. */
  const conditional = async (command: UpdateCommand): Promise<ExecutionRecord | undefined> => (await conditionHeld(command))?.record;

  async function createExecution(scope: TenantScope, record: ExecutionRecord): Promise<void> {
    await db.client.send(
      new PutCommand({
        TableName: db.table,
        // A re-run's steps start with the outputs they reuse.
        Item: {
          ...keys.execution(scope, record.workflowId, record.id),
          ...record,
          definition: packed(record.definition),
          steps: Object.fromEntries(Object.entries(record.steps).map(([id, step]) => [id, step.output !== undefined ? { ...step, output: packed(step.output) } : step])),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  async function getExecution(scope: TenantScope, workflowId: string, id: string): Promise<ExecutionRecord | undefined> {
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.execution(scope, workflowId, id), ConsistentRead: true }));
    return out.Item ? strip(out.Item) : undefined;
  }

  /** Newest first; optionally only one status. */
  async function listExecutions(
    scope: TenantScope,
    workflowId: string,
    page: { limit: number; cursor?: string; status?: ExecutionStatus },
  ): Promise<{ items: ExecutionRecord[]; nextCursor: string | null }> {
    const pk = keys.executionPartition(scope, workflowId);
    const after = db.cursors.decode(pk, page.cursor);
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined = after === undefined ? undefined : { pk, sk: after };
    // A status filter applies after DynamoDB's limit: read pages until the page is full.
    do {
      const out = await db.client.send(
        new QueryCommand({
          TableName: db.table,
          KeyConditionExpression: 'pk = :pk',
          ...(page.status ? { FilterExpression: '#status = :status', ExpressionAttributeNames: { '#status': 'status' } } : {}),
          ExpressionAttributeValues: { ':pk': pk, ...(page.status ? { ':status': page.status } : {}) },
          ScanIndexForward: false,
          Limit: page.limit + 1,
          ExclusiveStartKey: start,
        }),
      );
      items.push(...(out.Items ?? []));
      start = out.LastEvaluatedKey;
    } while (start && items.length <= page.limit);
    const more = items.length > page.limit || start !== undefined;
    const shown = items.slice(0, page.limit);
    return { items: shown.map(strip), nextCursor: more && shown.length > 0 ? db.cursors.encode(pk, shown[shown.length - 1]) : null };
  }

  const key = (scope: TenantScope, e: { workflowId: string; id: string }) => keys.execution(scope, e.workflowId, e.id);

  /**
   * Takes a step to run: from pending/queued/retrying, or from running when the lease of the
   * delivery that started it has run out (that worker died). Undefined: someone else has it, or the
   * execution is no longer running.
   */
  function claimStep(scope: TenantScope, e: { workflowId: string; id: string }, stepId: string, leaseMs: number) {
    const now = clock.now();
    return conditional(
      new UpdateCommand({
        TableName: db.table,
        Key: key(scope, e),
        UpdateExpression: 'SET steps.#s.#st = :running, steps.#s.attempt = steps.#s.attempt + :one, steps.#s.startedAt = :at, steps.#s.leaseUntil = :until',
        ConditionExpression: '#status = :execRunning AND (steps.#s.#st IN (:pending, :queued, :retrying) OR (steps.#s.#st = :running AND steps.#s.leaseUntil < :now))',
        ExpressionAttributeNames: { '#s': stepId, '#st': 'status', '#status': 'status' },
        ExpressionAttributeValues: {
          ':running': 'running',
          ':execRunning': 'running',
          ':pending': 'pending',
          ':queued': 'queued',
          ':retrying': 'retrying',
          ':one': 1,
          ':at': new Date(now).toISOString(),
          ':until': now + leaseMs,
          ':now': now,
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
  }

  /** Extends the lease of the attempt that runs the step; false once that attempt no longer holds it. */
  async function renewStepLease(scope: TenantScope, e: { workflowId: string; id: string }, stepId: string, attempt: number, leaseMs: number): Promise<boolean> {
    const renewed = await conditionHeld(
      new UpdateCommand({
        TableName: db.table,
        Key: key(scope, e),
        UpdateExpression: 'SET steps.#s.leaseUntil = :until',
        ConditionExpression: '#status = :running AND steps.#s.#st = :running AND steps.#s.attempt = :attempt',
        ExpressionAttributeNames: { '#s': stepId, '#st': 'status', '#status': 'status' },
        ExpressionAttributeValues: { ':until': clock.now() + leaseMs, ':running': 'running', ':attempt': attempt },
        ReturnValues: 'NONE',
      }),
    );
    return renewed !== undefined;
  }

  /** Ends the attempt that claimed the step (and only that attempt): succeeded, failed, skipped or retrying. */
  function settleStep(
    scope: TenantScope,
    e: { workflowId: string; id: string },
    stepId: string,
    attempt: number,
    result: { status: 'succeeded' | 'failed' | 'skipped' | 'retrying'; output?: unknown; error?: { code: string; message: string }; usage?: { inputTokens: number; outputTokens: number }; logs?: string[]; startedAt: string },
  ) {
    const now = new Date(clock.now());
    const values: Record<string, unknown> = {
      ':status': result.status,
      ':running': 'running',
      ':attempt': attempt,
      ':finished': now.toISOString(),
      ':duration': now.getTime() - Date.parse(result.startedAt),
      ':in': result.usage?.inputTokens ?? 0,
      ':out': result.usage?.outputTokens ?? 0,
    };
    let update = 'SET steps.#s.#st = :status, steps.#s.finishedAt = :finished, steps.#s.durationMs = :duration REMOVE steps.#s.leaseUntil';
    if (result.output !== undefined) {
      update = update.replace(' REMOVE', ', steps.#s.#output = :output REMOVE');
      values[':output'] = packed(result.output);
    }
    if (result.error) {
      update = update.replace(' REMOVE', ', steps.#s.#error = :error REMOVE');
      values[':error'] = result.error;
    }
    if (result.logs?.length) {
      update = update.replace(' REMOVE', ', steps.#s.logs = :logs REMOVE');
      values[':logs'] = packed(result.logs);
    }
    update += ' ADD #usage.inputTokens :in, #usage.outputTokens :out';
    return conditional(
      new UpdateCommand({
        TableName: db.table,
        Key: key(scope, e),
        UpdateExpression: update,
        ConditionExpression: 'steps.#s.#st = :running AND steps.#s.attempt = :attempt',
        ExpressionAttributeNames: {
          '#s': stepId,
          '#st': 'status',
          '#usage': 'usage',
          ...(result.output !== undefined ? { '#output': 'output' } : {}),
          ...(result.error ? { '#error': 'error' } : {}),
        },
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
  }

  /** Marks steps queued once their messages are sent (informational: claiming accepts pending too). */
  async function markQueued(scope: TenantScope, e: { workflowId: string; id: string }, stepIds: string[]): Promise<void> {
    if (stepIds.length === 0) return;
    const names: Record<string, string> = { '#st': 'status' };
    const sets = stepIds.map((id, i) => {
      names[`#s${i}`] = id;
      return `steps.#s${i}.#st = :queued`;
    });
    const conditions = stepIds.map((_, i) => `steps.#s${i}.#st = :pending`);
    await conditionHeld(
      new UpdateCommand({
        TableName: db.table,
        Key: key(scope, e),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: conditions.join(' AND '),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ':queued': 'queued', ':pending': 'pending' },
      }),
    );
  }

  /** Moves a running execution to a final state (once). */
  function finishExecution(
    scope: TenantScope,
    e: { workflowId: string; id: string },
    result: { status: 'succeeded' | 'failed'; output?: unknown; error?: { code: string; message: string } },
  ) {
    return conditional(
      new UpdateCommand({
        TableName: db.table,
        Key: key(scope, e),
        UpdateExpression: `SET #status = :status, finishedAt = :at${result.output !== undefined ? ', #output = :output' : ''}${result.error ? ', #error = :error' : ''}`,
        ConditionExpression: '#status IN (:running, :waiting)',
        ExpressionAttributeNames: { '#status': 'status', ...(result.output !== undefined ? { '#output': 'output' } : {}), ...(result.error ? { '#error': 'error' } : {}) },
        ExpressionAttributeValues: {
          ':status': result.status,
          ':running': 'running',
          ':waiting': 'waiting',
          ':at': isoNow(clock),
          ...(result.output !== undefined ? { ':output': packed(result.output) } : {}),
          ...(result.error ? { ':error': result.error } : {}),
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
  }

  /**
   * Cancels a running or waiting execution, and with it every step that has not finished — only
   * while those steps are as `seen` says, so a step that settles meanwhile is not called canceled
   * (undefined then: read again and retry; also when the execution has ended).
   */
  function cancelExecution(scope: TenantScope, e: { workflowId: string; id: string; steps: Record<string, StepState> }) {
    const at = isoNow(clock);
    const names: Record<string, string> = { '#status': 'status' };
    const values: Record<string, unknown> = { ':canceled': 'canceled', ':running': 'running', ':waiting': 'waiting', ':at': at };
    const sets = ['#status = :canceled', 'finishedAt = :at'];
    const removes: string[] = [];
    const conditions = ['#status IN (:running, :waiting)'];
    Object.values(e.steps)
      .filter((step) => !FINAL_STEP_STATUSES.has(step.status))
      .forEach((step, i) => {
        names[`#s${i}`] = step.id;
        names['#st'] = 'status';
        values[`:was${i}`] = step.status;
        sets.push(`steps.#s${i}.#st = :canceled`, `steps.#s${i}.finishedAt = :at`);
        removes.push(`steps.#s${i}.leaseUntil`);
        conditions.push(`steps.#s${i}.#st = :was${i}`);
      });
    return conditional(
      new UpdateCommand({
        TableName: db.table,
        Key: key(scope, e),
        UpdateExpression: `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`,
        ConditionExpression: conditions.join(' AND '),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
  }
  /** A human step's attempt stops and waits for a person (its lease goes: nobody works on it). */
  /** A running step starts waiting: for a person (`request`), or for a background run (`run`). */
  function pauseStep(scope: TenantScope, e: { workflowId: string; id: string }, stepId: string, attempt: number, wait: { request: HumanRequest } | { run: AwaitedRun }) {
    const [field, value] = 'request' in wait ? ['request', wait.request] : ['run', wait.run];
    return conditional(
      new UpdateCommand({
        TableName: db.table,
        Key: key(scope, e),
        UpdateExpression: 'SET steps.#s.#st = :waiting, steps.#s.#wait = :wait REMOVE steps.#s.leaseUntil',
        ConditionExpression: 'steps.#s.#st = :running AND steps.#s.attempt = :attempt',
        ExpressionAttributeNames: { '#s': stepId, '#st': 'status', '#wait': field },
        ExpressionAttributeValues: { ':waiting': 'waiting', ':running': 'running', ':attempt': attempt, ':wait': value },
        ReturnValues: 'ALL_NEW',
      }),
    );
  }

  /**
   * Ends a waiting step (a person completed it, or its time ran out), once: the execution runs again.
   * Undefined when the step was not waiting (already completed) or the execution has finished.
   */
  function resolveWaitingStep(
    scope: TenantScope,
    e: { workflowId: string; id: string },
    stepId: string,
    result: { status: 'succeeded' | 'failed'; output?: unknown; error?: { code: string; message: string }; completedBy: 'api' | 'timeout' | 'run'; startedAt: string },
  ) {
    const now = new Date(clock.now());
    return conditional(
      new UpdateCommand({
        TableName: db.table,
        Key: key(scope, e),
        UpdateExpression: `SET #status = :running, steps.#s.#st = :to, steps.#s.finishedAt = :at, steps.#s.durationMs = :duration, steps.#s.completedBy = :by${result.output !== undefined ? ', steps.#s.#output = :output' : ''}${result.error ? ', steps.#s.#error = :error' : ''}`,
        ConditionExpression: 'steps.#s.#st = :waiting AND #status IN (:running, :waiting)',
        ExpressionAttributeNames: { '#s': stepId, '#st': 'status', '#status': 'status', ...(result.output !== undefined ? { '#output': 'output' } : {}), ...(result.error ? { '#error': 'error' } : {}) },
        ExpressionAttributeValues: {
          ':running': 'running',
          ':waiting': 'waiting',
          ':to': result.status,
          ':at': now.toISOString(),
          ':duration': now.getTime() - Date.parse(result.startedAt),
          ':by': result.completedBy,
          ...(result.output !== undefined ? { ':output': packed(result.output) } : {}),
          ...(result.error ? { ':error': result.error } : {}),
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
  }

  /**
   * The execution waits for a person: only while every step is as `seen` says (waiting ones still
   * waiting, the others pending or settled), so a step completed or sent meanwhile keeps it running.
   */
  function markWaiting(scope: TenantScope, e: { workflowId: string; id: string }, seen: Record<string, StepState>) {
    const names: Record<string, string> = { '#st': 'status', '#status': 'status' };
    const conditions = ['#status = :running'];
    const others = { ':pending': 'pending', ':succeeded': 'succeeded', ':failed': 'failed', ':skipped': 'skipped' };
    Object.values(seen).forEach((step, i) => {
      names[`#s${i}`] = step.id;
      conditions.push(step.status === 'waiting' ? `steps.#s${i}.#st = :waiting` : `steps.#s${i}.#st IN (${Object.keys(others).join(', ')})`);
    });
    // DynamoDB refuses a value the expression does not use: the others' statuses only when a step is not waiting.
    const usesOthers = Object.values(seen).some((step) => step.status !== 'waiting');
    return conditional(
      new UpdateCommand({
        TableName: db.table,
        Key: key(scope, e),
        UpdateExpression: 'SET #status = :waiting',
        ConditionExpression: conditions.join(' AND '),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ':running': 'running', ':waiting': 'waiting', ...(usesOthers ? others : {}) },
        ReturnValues: 'ALL_NEW',
      }),
    );
  }

  /** A map step's items are stored and the first sent: it stays running, without a lease (its items have their own). */
  function startMap(scope: TenantScope, e: { workflowId: string; id: string }, stepId: string, attempt: number, progress: MapProgress) {
    return conditional(
      new UpdateCommand({
        TableName: db.table,
        Key: key(scope, e),
        UpdateExpression: 'SET steps.#s.#map = :map REMOVE steps.#s.leaseUntil',
        ConditionExpression: '#status = :running AND steps.#s.#st = :running AND steps.#s.attempt = :attempt',
        ExpressionAttributeNames: { '#s': stepId, '#st': 'status', '#status': 'status', '#map': 'map' },
        ExpressionAttributeValues: { ':running': 'running', ':attempt': attempt, ':map': progress },
        ReturnValues: 'ALL_NEW',
      }),
    );
  }

  /** One item of a running map settled: counted, and the next item's place taken (`started`). */
  function advanceMap(scope: TenantScope, e: { workflowId: string; id: string }, stepId: string, failed: boolean) {
    return conditional(
      new UpdateCommand({
        TableName: db.table,
        Key: key(scope, e),
        UpdateExpression: 'ADD steps.#s.#map.done :one, steps.#s.#map.started :one, steps.#s.#map.failed :failed',
        ConditionExpression: '#status = :running AND steps.#s.#st = :running AND attribute_exists(steps.#s.#map)',
        ExpressionAttributeNames: { '#s': stepId, '#st': 'status', '#status': 'status', '#map': 'map' },
        ExpressionAttributeValues: { ':running': 'running', ':one': 1, ':failed': failed ? 1 : 0 },
        ReturnValues: 'ALL_NEW',
      }),
    );
  }

  // ── pointers to the executions waiting for a person, across the tenant's workflows ──
  async function putWaiting(scope: TenantScope, execution: { id: string; workflowId: string }): Promise<void> {
    await db.client.send(new PutCommand({ TableName: db.table, Item: { ...keys.waitingExecution(scope, execution.id), workflowId: execution.workflowId } }));
  }

  async function removeWaiting(scope: TenantScope, executionId: string): Promise<void> {
    await db.client.send(new DeleteCommand({ TableName: db.table, Key: keys.waitingExecution(scope, executionId) }));
  }

  /** A page of pointers, newest execution first (ids are time-ordered). */
  async function listWaiting(scope: TenantScope, page: { limit: number; cursor?: string }): Promise<{ items: Array<{ executionId: string; workflowId: string }>; nextCursor: string | null }> {
    const pk = keys.waitingPartition(scope);
    const after = db.cursors.decode(pk, page.cursor);
    const out = await db.client.send(
      new QueryCommand({ TableName: db.table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ScanIndexForward: false, Limit: page.limit + 1, ExclusiveStartKey: after === undefined ? undefined : { pk, sk: after } }),
    );
    const items = out.Items ?? [];
    const more = items.length > page.limit;
    const shown = more ? items.slice(0, page.limit) : items;
    return { items: shown.map((i) => ({ executionId: i.sk as string, workflowId: i.workflowId as string })), nextCursor: more ? db.cursors.encode(pk, shown[shown.length - 1]) : null };
  }

  return { changes, createExecution, getExecution, listExecutions, claimStep, renewStepLease, settleStep, markQueued, finishExecution, cancelExecution, pauseStep, resolveWaitingStep, markWaiting, startMap, advanceMap, putWaiting, removeWaiting, listWaiting };
}

export type ExecutionsStore = ReturnType<typeof executionsStore>;
