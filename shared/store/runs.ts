import { EventEmitter } from 'node:events';
import { gunzipSync, gzipSync } from 'node:zlib';
import { z } from 'zod';
import type { Clock } from '../clock';
import type { TenantScope } from '../tenancy';
import { ifConditionHolds } from './conditional';
import type { Db } from './db';
import { GetCommand, QueryCommand, TransactionCanceledException, TransactWriteCommand, UpdateCommand } from './dynamo-commands';
import { anObject, readItem } from './item-shape';
import { keys } from './keys';

/**
 * Background runs of agents: one item per run (its status, where it is, its checkpoint), and its
 * history as events, one item each, numbered from 1. A step's outcome — the run's next position, its
 * checkpoint and the step's events — is one conditional transaction on the position and the
 * attempt that claimed it, so a redelivered or late message cannot record a step twice.
 */
export const RUN_STATUSES = ['queued', 'in_progress', 'requires_action', 'completed', 'failed', 'cancelled', 'expired'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const ENDED_RUN_STATUSES = new Set<RunStatus>(['completed', 'failed', 'cancelled', 'expired']);

const toolCall = z.object({ id: z.string(), name: z.string(), arguments: z.record(z.string(), z.unknown()).optional() });
const usage = z.object({ inputTokens: z.number(), outputTokens: z.number(), cachedInputTokens: z.number().optional(), cacheWriteTokens: z.number().optional() });

const runShape = z.lazy(() =>
  z.object({
    id: z.string(),
    agentId: z.string(),
    sessionId: z.string(),
    status: z.enum(RUN_STATUSES),
    createdAt: z.string(),
    updatedAt: z.string(),
    startedAt: z.string().optional(),
    finishedAt: z.string().optional(),
    /** Epoch ms past which the run is `expired`. */
    deadline: z.number(),
    maxToolSteps: z.number(),
    maxTokens: z.number().optional(),
    /** Where the finished run is posted; the domain seals the secret, the store keeps it as is. */
    webhook: z.object({ url: z.string(), sealed: anObject }).optional(),
    keyId: z.string().optional(),
    /** What was asked, as listings show it. */
    message: z.string(),
    userId: z.string().optional(),
    /** Model steps taken; the next step's number. */
    step: z.number(),
    /** What the next message does: call the model, or run the round the model asked for. */
    phase: z.enum(['model', 'tools']),
    /** Events written (the last event's number). */
    seq: z.number(),
    /** While a step runs: when another delivery may take it over (its worker died). */
    leaseUntil: z.number().optional(),
    attempt: z.number(),
    /** The turn's state between steps (gzipped JSON: it holds the conversation and the tool rounds). */
    checkpoint: z.unknown().optional(),
    /** The round to run (phase tools), or the calls a person decides on (requires_action). */
    round: z.array(toolCall).optional(),
    /** While it waits (requires_action): accounts the end user must connect first, one per provider. */
    requiredActions: z.array(z.object({ type: z.literal('authorization'), provider: z.string(), url: z.string() })).optional(),
    /** A person's decisions on the round's calls. */
    approvals: z.array(z.object({ id: z.string(), approved: z.boolean(), reason: z.string().optional() })).optional(),
    reply: z.string().optional(),
    sources: z.array(z.unknown()).optional(),
    output: z.unknown().optional(),
    usage,
    model: z.string().optional(),
    agentVersion: z.union([z.number(), z.literal('draft')]).optional(),
    messageId: z.string().optional(),
    error: z.object({ code: z.string(), message: z.string() }).optional(),
    /** Set by the OpenAI Responses API's background mode: the response this run answers. */
    responseId: z.string().optional(),
    /** The workflow step waiting for this run (a background agent step): its message goes again when the run ends. */
    parent: z.object({ workflowId: z.string(), executionId: z.string(), stepId: z.string() }).optional(),
    /** The run this one re-runs, and the model step it re-ran from. */
    rerunOf: z.object({ runId: z.string(), fromStep: z.number() }).optional(),
    /** Started over the A2A protocol: the client's message id (the task's history names it). */
    a2a: z.object({ messageId: z.string() }).optional(),
    /** Where the run's changes are pushed (A2A push notification configs); the domain seals their credentials. */
    push: z.array(z.object({ id: z.string(), url: z.string(), sealed: anObject.optional(), scheme: z.string().optional() })).optional(),
  }),
);
export type RunRecord = z.infer<typeof runShape>;

const eventShape = z.lazy(() => z.object({ seq: z.number(), type: z.string(), at: z.string(), data: z.record(z.string(), z.unknown()) }));
export type RunEvent = z.infer<typeof eventShape>;
/** An event before its number is given (the transaction that writes it numbers it). */
export type NewRunEvent = Omit<RunEvent, 'seq' | 'at'>;

const pack = (value: unknown) => gzipSync(JSON.stringify(value));
const unpack = (value: unknown) => (value instanceof Uint8Array ? (JSON.parse(gunzipSync(value).toString('utf8')) as unknown) : value);
const strip = (item: Record<string, unknown>) => readItem(runShape, { ...item, checkpoint: unpack(item.checkpoint) }, 'run');

/** Bytes of a run's gzipped checkpoint past which the domain compacts its tool results (an item holds 400 KB). */
export const CHECKPOINT_BYTES = 250_000;
/** The packed size of a checkpoint, as the run's item would hold it. */
export const packedSize = (checkpoint: unknown) => pack(checkpoint).byteLength;

export function runsStore(db: Db, clock: Clock) {
  /** Changes this process made to runs, by run id: a local event stream hears of them at once. */
  const changes = new EventEmitter().setMaxListeners(0);
  const key = (scope: TenantScope, run: { agentId: string; id: string }) => keys.run(scope, run.agentId, run.id);
  const eventPut = (scope: TenantScope, runId: string, event: RunEvent) => ({
    Put: { TableName: db.table, Item: { ...keys.runEvent(scope, runId, event.seq), ...event }, ConditionExpression: 'attribute_not_exists(pk)' },
  });
  const numbered = (from: number, events: NewRunEvent[], at: string): RunEvent[] => events.map((e, i) => ({ ...e, seq: from + i + 1, at }));

  async function createRun(scope: TenantScope, run: RunRecord, events: NewRunEvent[]): Promise<RunRecord> {
    const at = run.createdAt;
    const written = numbered(0, events, at);
    const record = { ...run, seq: written.length };
    await db.client.send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: db.table, Item: { ...key(scope, run), ...record, ...(run.checkpoint !== undefined ? { checkpoint: pack(run.checkpoint) } : {}) }, ConditionExpression: 'attribute_not_exists(pk)' } },
          ...written.map((e) => eventPut(scope, run.id, e)),
        ],
      }),
    );
    return record;
  }

  async function getRun(scope: TenantScope, agentId: string, runId: string): Promise<RunRecord | undefined> {
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.run(scope, agentId, runId), ConsistentRead: true }));
    return out.Item ? strip(out.Item) : undefined;
  }

  /** An agent's runs, newest first, optionally of one status or session, and of one end user (`userId`; null: of no end user). */
  async function listRuns(scope: TenantScope, agentId: string, page: { limit: number; cursor?: string; status?: RunStatus; sessionId?: string; userId?: string | null }): Promise<{ items: RunRecord[]; nextCursor: string | null }> {
    const pk = keys.runPartition(scope, agentId);
    const after = db.cursors.decode(pk, page.cursor);
    const filters = [...(page.status ? ['#status = :status'] : []), ...(page.sessionId ? ['sessionId = :sessionId'] : []), ...(page.userId === null ? ['attribute_not_exists(userId)'] : page.userId !== undefined ? ['userId = :userId'] : [])];
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined = after === undefined ? undefined : { pk, sk: after };
    // A filter applies after DynamoDB's limit: read pages until the page is full.
    do {
      const out = await db.client.send(
        new QueryCommand({
          TableName: db.table,
          KeyConditionExpression: 'pk = :pk',
          ...(filters.length > 0 ? { FilterExpression: filters.join(' AND ') } : {}),
          ...(page.status ? { ExpressionAttributeNames: { '#status': 'status' } } : {}),
          ExpressionAttributeValues: { ':pk': pk, ...(page.status ? { ':status': page.status } : {}), ...(page.sessionId ? { ':sessionId': page.sessionId } : {}), ...(typeof page.userId === 'string' ? { ':userId': page.userId } : {}) },
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

  /**
   * Takes the run's next step (`step`, `phase`) on a lease: only while the run is queued or in
   * progress at that position, within its deadline, and no live lease holds it (a worker that died
   * lets it go when its lease runs out). Undefined: another delivery has it, or the run moved on,
   * ended or ran out of time.
   */
  async function claimStep(scope: TenantScope, run: { agentId: string; id: string }, position: { step: number; phase: 'model' | 'tools' }, leaseMs: number): Promise<RunRecord | undefined> {
    const now = clock.now();
    const out = await ifConditionHolds(
      db.client.send(
        new UpdateCommand({
          TableName: db.table,
          Key: key(scope, run),
          UpdateExpression: 'SET #status = :progress, leaseUntil = :until, attempt = attempt + :one, updatedAt = :at, startedAt = if_not_exists(startedAt, :at)',
          ConditionExpression: '#status IN (:queued, :progress) AND step = :step AND phase = :phase AND deadline >= :now AND (attribute_not_exists(leaseUntil) OR leaseUntil < :now)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':progress': 'in_progress', ':queued': 'queued', ':until': now + leaseMs, ':one': 1, ':at': new Date(now).toISOString(), ':step': position.step, ':phase': position.phase, ':now': now },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return out?.Attributes ? strip(out.Attributes) : undefined;
  }

  /** Extends a claimed step's lease while its work goes on; false when the claim was lost. */
  async function renewLease(scope: TenantScope, run: RunRecord, leaseMs: number): Promise<boolean> {
    const out = await ifConditionHolds(
      db.client.send(
        new UpdateCommand({
          TableName: db.table,
          Key: key(scope, run),
          UpdateExpression: 'SET leaseUntil = :until',
          ConditionExpression: '#status = :progress AND attempt = :attempt',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':until': clock.now() + leaseMs, ':progress': 'in_progress', ':attempt': run.attempt },
        }),
      ),
    );
    return out !== undefined;
  }

  /** Lets a claimed step go (its attempt failed and will be retried): the next delivery need not wait out the lease. */
  async function releaseStep(scope: TenantScope, claimed: RunRecord): Promise<void> {
    await ifConditionHolds(
      db.client.send(
        new UpdateCommand({
          TableName: db.table,
          Key: key(scope, claimed),
          UpdateExpression: 'REMOVE leaseUntil',
          ConditionExpression: '#status = :progress AND attempt = :attempt',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':progress': 'in_progress', ':attempt': claimed.attempt },
        }),
      ),
    );
  }

  /**
   * Records a claimed step's outcome: the run's changed fields and the step's events, at once, only
   * if the claim still holds (same status in progress, same attempt). The lease goes. Undefined when
   * it did not hold (the run was cancelled, or another delivery took the step over).
   */
  async function recordStep(scope: TenantScope, claimed: RunRecord, change: Partial<RunRecord>, events: NewRunEvent[]): Promise<RunRecord | undefined> {
    const at = new Date(clock.now()).toISOString();
    const written = numbered(claimed.seq, events, at);
    const next: Record<string, unknown> = { ...change, seq: claimed.seq + written.length, updatedAt: at };
    if (change.checkpoint !== undefined) next.checkpoint = pack(change.checkpoint);
    const names: Record<string, string> = { '#status': 'status' };
    const values: Record<string, unknown> = { ':progress': 'in_progress', ':attempt': claimed.attempt };
    const sets = Object.entries(next)
      .filter(([, v]) => v !== undefined)
      .map(([field, value], i) => {
        names[`#f${i}`] = field;
        values[`:v${i}`] = value;
        return `#f${i} = :v${i}`;
      });
    // Fields the change leaves out by name (set to undefined) are removed.
    const removed = Object.entries(change).filter(([, v]) => v === undefined).map(([field], i) => ((names[`#r${i}`] = field), `#r${i}`));
    try {
      await db.client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: db.table,
                Key: key(scope, claimed),
                UpdateExpression: `SET ${sets.join(', ')} REMOVE leaseUntil${removed.length ? `, ${removed.join(', ')}` : ''}`,
                ConditionExpression: '#status = :progress AND attempt = :attempt',
                ExpressionAttributeNames: names,
                ExpressionAttributeValues: values,
              },
            },
            ...written.map((e) => eventPut(scope, claimed.id, e)),
          ],
        }),
      );
    } catch (error) {
      if (error instanceof TransactionCanceledException) return undefined;
      throw error;
    }
    const record = { ...claimed, ...change, seq: claimed.seq + written.length, updatedAt: at, leaseUntil: undefined } as RunRecord;
    changes.emit(claimed.id, record);
    return record;
  }

  /**
   * Changes a run that no step holds (a person's decision, a cancel), with its events: only while
   * it is in one of `from` and at the event number read (another writer in between makes this
   * fail: read again and retry). Undefined when that did not hold.
   */
  async function changeRun(scope: TenantScope, run: RunRecord, from: RunStatus[], change: Partial<RunRecord>, events: NewRunEvent[]): Promise<RunRecord | undefined> {
    const at = new Date(clock.now()).toISOString();
    const written = numbered(run.seq, events, at);
    const next: Record<string, unknown> = { ...change, seq: run.seq + written.length, updatedAt: at };
    const names: Record<string, string> = { '#status': 'status' };
    const values: Record<string, unknown> = { ':seq': run.seq, ...Object.fromEntries(from.map((s, i) => [`:from${i}`, s])) };
    const sets = Object.entries(next)
      .filter(([, v]) => v !== undefined)
      .map(([field, value], i) => {
        names[`#f${i}`] = field;
        values[`:v${i}`] = value;
        return `#f${i} = :v${i}`;
      });
    // Fields the change leaves out by name (set to undefined) are removed.
    const removed = Object.entries(change).filter(([, v]) => v === undefined).map(([field], i) => ((names[`#r${i}`] = field), `#r${i}`));
    try {
      await db.client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: db.table,
                Key: key(scope, run),
                UpdateExpression: `SET ${sets.join(', ')}${removed.length ? ` REMOVE ${removed.join(', ')}` : ''}`,
                ConditionExpression: `#status IN (${from.map((_, i) => `:from${i}`).join(', ')}) AND seq = :seq`,
                ExpressionAttributeNames: names,
                ExpressionAttributeValues: values,
              },
            },
            ...written.map((e) => eventPut(scope, run.id, e)),
          ],
        }),
      );
    } catch (error) {
      if (error instanceof TransactionCanceledException) return undefined;
      throw error;
    }
    const record = { ...run, ...change, seq: run.seq + written.length, updatedAt: at };
    changes.emit(run.id, record);
    return record;
  }

  /** Replaces where the run's changes are pushed (whatever its status: another writer's fields are left as they are). */
  async function setPush(scope: TenantScope, run: { agentId: string; id: string }, push: NonNullable<RunRecord['push']>): Promise<void> {
    await db.client.send(
      new UpdateCommand({
        TableName: db.table,
        Key: key(scope, run),
        UpdateExpression: 'SET #push = :push',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#push': 'push' },
        ExpressionAttributeValues: { ':push': push },
      }),
    );
  }

  /** A run's events after `afterSeq`, in order (at most `limit`). */
  async function listEvents(scope: TenantScope, runId: string, afterSeq: number, limit = 500): Promise<RunEvent[]> {
    const out = await db.client.send(
      new QueryCommand({
        TableName: db.table,
        KeyConditionExpression: 'pk = :pk AND sk > :after',
        ExpressionAttributeValues: { ':pk': keys.runEventPartition(scope, runId), ':after': keys.runEvent(scope, runId, afterSeq).sk },
        ConsistentRead: true,
        Limit: limit,
      }),
    );
    return (out.Items ?? []).map(({ pk: _pk, sk: _sk, ...e }) => readItem(eventShape, e, 'run event'));
  }

  return { changes, createRun, getRun, listRuns, claimStep, renewLease, releaseStep, recordStep, changeRun, listEvents, setPush };
}

export type RunsStore = ReturnType<typeof runsStore>;
