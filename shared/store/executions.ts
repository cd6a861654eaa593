import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { TenantScope } from '../tenancy';
import type { Db } from './db';
import { keys } from './keys';
import { ifConditionHolds } from './conditional';

/**
 * Workflow executions: one item each, steps as a map inside it, so every step transition is one
 * conditional update of one item (a duplicate or late message cannot move a step twice).
 */
export type StepStatus = 'pending' | 'queued' | 'running' | 'retrying' | 'succeeded' | 'failed' | 'skipped';
export type ExecutionStatus = 'running' | 'succeeded' | 'failed' | 'canceled';

export interface StepState {
  id: string;
  type: string;
  status: StepStatus;
  attempt: number;
  startedAt?: string;
  finishedAt?: string;
  durationMs?: number;
  output?: unknown;
  error?: { code: string; message: string };
  /** While running: when another delivery may take the step over (the worker died). */
  leaseUntil?: number;
}

export interface ExecutionRecord {
  id: string;
  workflowId: string;
  workflowVersion: number;
  status: ExecutionStatus;
  input: string;
  parameters: Record<string, unknown>;
  output?: unknown;
  error?: { code: string; message: string };
  steps: Record<string, StepState>;
  /** The definition the execution started with; a later PUT of the workflow does not change it. */
  definition: Array<Record<string, unknown> & { id: string; type: string; dependsOn: string[] }>;
  usage: { inputTokens: number; outputTokens: number };
  /** The API key that started it, for usage accounting. */
  keyId?: string;
  createdAt: string;
  startedAt: string;
  finishedAt?: string;
}

const strip = ({ pk: _pk, sk: _sk, ...rest }: Record<string, unknown>) => rest as unknown as ExecutionRecord;

export function executionsStore(db: Db) {
  async function conditional(command: UpdateCommand): Promise<ExecutionRecord | undefined> {
    const out = await ifConditionHolds(db.client.send(command));
    return out && strip(out.Attributes ?? {});
  }

  async function createExecution(scope: TenantScope, record: ExecutionRecord): Promise<void> {
    await db.client.send(
      new PutCommand({
        TableName: db.table,
        Item: { ...keys.execution(scope, record.workflowId, record.id), ...record },
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
    const now = Date.now();
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
    const renewed = await conditional(
      new UpdateCommand({
        TableName: db.table,
        Key: key(scope, e),
        UpdateExpression: 'SET steps.#s.leaseUntil = :until',
        ConditionExpression: '#status = :running AND steps.#s.#st = :running AND steps.#s.attempt = :attempt',
        ExpressionAttributeNames: { '#s': stepId, '#st': 'status', '#status': 'status' },
        ExpressionAttributeValues: { ':until': Date.now() + leaseMs, ':running': 'running', ':attempt': attempt },
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
    result: { status: 'succeeded' | 'failed' | 'skipped' | 'retrying'; output?: unknown; error?: { code: string; message: string }; usage?: { inputTokens: number; outputTokens: number }; startedAt: string },
  ) {
    const now = new Date();
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
      values[':output'] = result.output;
    }
    if (result.error) {
      update = update.replace(' REMOVE', ', steps.#s.#error = :error REMOVE');
      values[':error'] = result.error;
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
    await conditional(
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
        ConditionExpression: '#status = :running',
        ExpressionAttributeNames: { '#status': 'status', ...(result.output !== undefined ? { '#output': 'output' } : {}), ...(result.error ? { '#error': 'error' } : {}) },
        ExpressionAttributeValues: {
          ':status': result.status,
          ':running': 'running',
          ':at': new Date().toISOString(),
          ...(result.output !== undefined ? { ':output': result.output } : {}),
          ...(result.error ? { ':error': result.error } : {}),
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
  }

  function cancelExecution(scope: TenantScope, e: { workflowId: string; id: string }) {
    return conditional(
      new UpdateCommand({
        TableName: db.table,
        Key: key(scope, e),
        UpdateExpression: 'SET #status = :canceled, finishedAt = :at',
        ConditionExpression: '#status = :running',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':canceled': 'canceled', ':running': 'running', ':at': new Date().toISOString() },
        ReturnValues: 'ALL_NEW',
      }),
    );
  }
  return { createExecution, getExecution, listExecutions, claimStep, renewStepLease, settleStep, markQueued, finishExecution, cancelExecution };
}

export type ExecutionsStore = ReturnType<typeof executionsStore>;
