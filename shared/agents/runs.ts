import { z } from '@hono/zod-openapi';
import { ConflictError, NotFoundError, ValidationError } from '../errors';
import { isId, newId } from '../ids';
import type { ChatMessage } from '../models/types';
import type { Runtime } from '../runtime';
import { integerBetween } from '../schema-helpers';
import { ENDED_RUN_STATUSES, RUN_STATUSES, type NewRunEvent, type RunEvent, type RunRecord, type RunStatus } from '../store/runs';
import type { TenantScope } from '../tenancy';
import { notifyWith, sealWebhook, sendSteps } from '../workflows';
import { agents } from './agents';
import { copySession } from './session-fork';
import { pushRunChange } from './run-push';
import { checkpointFrom, checkpointOf, startTurn, type ConverseInput, type ToolApproval } from './turn';

/**
 * Background runs: an agent's turn that outlives any one request. The run's turn is opened when it
 * is asked for (so a bad request is a 4xx then), kept as a checkpoint, and taken a step at a time —
 * a model call, or a round of tool calls — by the steps queue's worker (run-steps.ts), each step's
 * outcome written before the next is sent. Its history is a numbered list of events.
 */
export { RUN_STATUSES };
/** A run as the store keeps it (for the protocol adapters that shape it: the Responses API's background mode). */
export type Run = RunRecord;
export const MAX_RUN_TOOL_STEPS = 100;
export const MAX_RUN_SECONDS = 86_400;

export const runSettings = {
  maxToolSteps: integerBetween(1, MAX_RUN_TOOL_STEPS).default(20).openapi({ description: `Rounds of tool calls before the model is asked for a final answer without tools (at most ${MAX_RUN_TOOL_STEPS})` }),
  maxDurationSeconds: integerBetween(1, MAX_RUN_SECONDS).default(900).openapi({ description: `After this the run is expired with its steps so far (at most ${MAX_RUN_SECONDS}: a day)` }),
  budget: z.strictObject({ maxTokens: integerBetween(1, 100_000_000) }).optional().openapi({ description: 'The run fails with QUOTA_EXCEEDED once its model calls have used more tokens' }),
  webhook: z
    .strictObject({ url: z.string().max(2048), secret: z.string().min(16).max(256) })
    .optional()
    .openapi({ description: 'The finished run is POSTed here, signed as workflow webhooks are (Cairn-Signature)' }),
};

export interface RunInput {
  converse: Omit<ConverseInput, 'toolApprovals' | 'clientTools' | 'toolRounds' | 'store' | 'exchange'>;
  maxToolSteps: number;
  maxDurationSeconds: number;
  maxTokens?: number;
  webhook?: { url: string; secret: string };
  /** OpenAI background responses: the response this run answers. */
  responseId?: string;
  /** The stored exchange's ids (the Responses API names its reply before it is made). */
  exchange?: { questionId: string; replyId: string };
  /** The workflow step that waits for this run. */
  parent?: RunRecord['parent'];
  /** Started over A2A: the client's message id. */
  a2a?: RunRecord['a2a'];
  /** Where its changes are pushed (A2A push notification configs, credentials sealed). */
  push?: RunRecord['push'];
}

/** The last user message of a conversation given whole (`messages`), and the history before it. */
export function lastUserMessage(messages: ChatMessage[]): { message: string; history: ChatMessage[] } {
  const last = messages[messages.length - 1];
  if (!last || last.role !== 'user') throw new ValidationError('messages', 'must end with a user message');
  return { message: last.content, history: messages.slice(0, -1) };
}

/** The first message of a run: its first model step. */
export async function sendRunStep(rt: Runtime, scope: TenantScope, run: Pick<RunRecord, 'agentId' | 'id' | 'step' | 'phase'>, delaySeconds?: number): Promise<void> {
  await rt.queues.workflowSteps.send([{ type: 'run', tenantId: scope.tenantId, agentId: run.agentId, runId: run.id, step: run.step, phase: run.phase }], { delaySeconds });
}

/**
 * Starts a run: its turn is opened now (the agent, its release, the session, grounding, the model —
 * anything wrong is a 4xx here), kept as the run's checkpoint, and its first step queued. The run's
 * exchange is stored in its session like a converse turn's, so converse on that session continues it.
 */
export async function createRun(rt: Runtime, scope: TenantScope, agentId: string, input: RunInput): Promise<RunRecord> {
  const now = rt.clock.now();
  // Ids of the exchange it will store, chosen now: a final step that runs twice writes the same items.
  const exchange = input.exchange ?? { questionId: newId('message', now), replyId: newId('message', now + 1) };
  const turn = await startTurn(rt, scope, agentId, { ...input.converse, ...(input.converse.history ? { store: true } : {}), exchange });
  const id = newId('run', now);
  const webhook = input.webhook ? await sealWebhook(rt, scope, { url: input.webhook.url, secret: input.webhook.secret, events: ['succeeded'] }, undefined, 'webhook') : undefined;
  const at = new Date(now).toISOString();
  const run: RunRecord = {
    id,
    agentId: turn.agent.id,
    sessionId: turn.sessionId,
    status: 'queued',
    createdAt: at,
    updatedAt: at,
    deadline: now + input.maxDurationSeconds * 1000,
    maxToolSteps: input.maxToolSteps,
    ...(input.maxTokens ? { maxTokens: input.maxTokens } : {}),
    ...(webhook ? { webhook: { url: webhook.url, sealed: webhook.sealed } } : {}),
    ...(input.converse.keyId ? { keyId: input.converse.keyId } : {}),
    message: input.converse.message.slice(0, 2000),
    ...(turn.userId ? { userId: turn.userId } : {}),
    step: 0,
    phase: 'model',
    seq: 0,
    attempt: 0,
    checkpoint: { turn: checkpointOf(turn), exchange, persist: turn.persist, store: turn.store },
    usage: { inputTokens: 0, outputTokens: 0 },
    agentVersion: turn.agentVersion,
    ...(input.responseId ? { responseId: input.responseId } : {}),
    ...(input.parent ? { parent: input.parent } : {}),
    ...(input.a2a ? { a2a: input.a2a } : {}),
    ...(input.push?.length ? { push: input.push } : {}),
  };
  // On the sweeper's list before its first message: a crash between the two leaves it re-driven, not lost.
  await rt.store.unfinishedWork.put({ kind: 'run', tenantId: scope.tenantId, id, agentId: run.agentId, seenAt: now, redrives: 0 });
  const created = await rt.store.runs.createRun(scope, run, [{ type: 'status', data: { status: 'queued' } }]);
  await sendRunStep(rt, scope, created);
  return created;
}

/**
 * A new run of an ended one from model step `fromStep`: the rounds of tool calls before it keep
 * their results (listed as reused steps) and are not run again, so none of their effects repeat;
 * the model is asked again from there. Its exchange goes to a copy of the session as it was before
 * the run's question, so the original conversation keeps its own answer.
 */
export async function rerunRun(rt: Runtime, scope: TenantScope, agentId: string, runId: string, request: { fromStep: number; keyId?: string }): Promise<RunRecord> {
  const original = await getRun(rt, scope, agentId, runId);
  if (!ENDED_RUN_STATUSES.has(original.status)) throw new ConflictError(`Run ${runId} is ${original.status}; only a run that has ended can be re-run`, { status: original.status });
  const kept = original.checkpoint as { turn: unknown; exchange: { questionId: string; replyId: string }; persist: boolean; store: boolean } | undefined;
  if (!kept) throw new ConflictError(`Run ${runId} kept no state to re-run from`);
  const turn = checkpointFrom(kept.turn, runId);
  const rounds = turn.request.toolRounds ?? [];
  if (request.fromStep > rounds.length) throw new ValidationError('fromStep', `must be at most ${rounds.length}: run ${runId} recorded ${rounds.length} round${rounds.length === 1 ? '' : 's'} of tool calls`);
  const now = rt.clock.now();
  const reusedRounds = rounds.slice(0, request.fromStep);
  const reusedCalls = new Set(reusedRounds.flatMap((r) => r.calls.map((c) => c.id)));
  const { answeredBy: _answeredBy, ...rest } = turn;
  const restarted = {
    ...rest,
    request: { ...turn.request, ...(reusedRounds.length > 0 ? { toolRounds: reusedRounds } : { toolRounds: undefined }) },
    progress: { toolCalls: turn.progress.toolCalls.filter((c) => reusedCalls.has(c.id)), usage: { inputTokens: 0, outputTokens: 0 }, step: request.fromStep, searches: 0, readUnits: 0, models: {} },
    ...(request.keyId ? { keyId: request.keyId } : {}),
  };
  const { sessionId } = await copySession(rt, scope, original.agentId, original.sessionId, { before: kept.exchange.questionId, until: original.createdAt });
  const reusedSteps = (await allEvents(rt, scope, runId)).filter((e) => e.type === 'step' && typeof e.data.step === 'number' && e.data.step < request.fromStep);
  const at = new Date(now).toISOString();
  const run: RunRecord = {
    ...original,
    id: newId('run', now),
    sessionId,
    status: 'queued',
    createdAt: at,
    updatedAt: at,
    deadline: now + (original.deadline - Date.parse(original.createdAt)),
    ...(request.keyId ? { keyId: request.keyId } : {}),
    step: request.fromStep,
    phase: 'model',
    seq: 0,
    attempt: 0,
    checkpoint: { ...kept, turn: restarted, exchange: { questionId: newId('message', now), replyId: newId('message', now + 1) } },
    usage: { inputTokens: 0, outputTokens: 0 },
    rerunOf: { runId, fromStep: request.fromStep },
    startedAt: undefined,
    finishedAt: undefined,
    leaseUntil: undefined,
    round: undefined,
    approvals: undefined,
    reply: undefined,
    sources: undefined,
    output: undefined,
    model: undefined,
    messageId: undefined,
    error: undefined,
    responseId: undefined,
    parent: undefined,
    a2a: undefined,
    push: undefined,
  };
  await rt.store.unfinishedWork.put({ kind: 'run', tenantId: scope.tenantId, id: run.id, agentId: run.agentId, seenAt: now, redrives: 0 });
  const created = await rt.store.runs.createRun(scope, run, [...reusedSteps.map((e) => ({ type: 'step', data: { ...e.data, reused: true } })), { type: 'status', data: { status: 'queued' } }]);
  await sendRunStep(rt, scope, created);
  return created;
}

/** The background run answering an OpenAI response (in the response's session), if there is one. */
export async function runOfResponse(rt: Runtime, scope: TenantScope, agentId: string, sessionId: string, responseId: string): Promise<RunRecord | undefined> {
  for (let cursor: string | undefined; ; ) {
    const page = await rt.store.runs.listRuns(scope, agentId, { limit: 100, sessionId, ...(cursor ? { cursor } : {}) });
    const found = page.items.find((r) => r.responseId === responseId);
    if (found || !page.nextCursor) return found;
    cursor = page.nextCursor;
  }
}

/** A run of the tenant's agent, or a 404 (another tenant's, or an id of another shape). */
export async function getRun(rt: Runtime, scope: TenantScope, agentId: string, runId: string): Promise<RunRecord> {
  const run = isId('run', runId) ? await rt.store.runs.getRun(scope, agentId, runId) : undefined;
  if (!run) throw new NotFoundError('run', runId);
  return run;
}

export async function listRuns(rt: Runtime, scope: TenantScope, agentId: string, page: { limit: number; cursor?: string; status?: RunStatus; sessionId?: string; userId?: string | null }) {
  await agents.get(rt, scope, agentId);
  return rt.store.runs.listRuns(scope, agentId, page);
}

/** A run's steps, as its events recorded them (a model call with the model that answered; each tool call). */
export async function runSteps(rt: Runtime, scope: TenantScope, run: RunRecord): Promise<Array<Record<string, unknown>>> {
  const events = await allEvents(rt, scope, run.id);
  return events.filter((e) => e.type === 'step').map((e) => e.data);
}

async function allEvents(rt: Runtime, scope: TenantScope, runId: string, afterSeq = 0): Promise<RunEvent[]> {
  const out: RunEvent[] = [];
  for (let after = afterSeq; ; ) {
    const page = await rt.store.runs.listEvents(scope, runId, after);
    out.push(...page);
    if (page.length < 500) return out;
    after = page[page.length - 1]!.seq;
  }
}

/** Events after `afterSeq` (for a stream resumed with Last-Event-ID). */
export const runEventsAfter = (rt: Runtime, scope: TenantScope, runId: string, afterSeq: number) => allEvents(rt, scope, runId, afterSeq);

/** Resolves when this process records a change of the run, or after `maxMs` (its steps run elsewhere: read again). */
export function nextRunChange(rt: Runtime, runId: string, maxMs: number): Promise<void> {
  const changes = rt.store.runs.changes;
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      changes.off(runId, done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, maxMs));
    changes.on(runId, done);
  });
}

const PING_EVERY_MS = 30_000;

/**
 * A run's events after `afterSeq`, each with its number as its id, as they are recorded, until its
 * `done` (a finished run replays its events and ends), the caller goes away or `maxMs` passes. A
 * quiet run (a person not answering yet) sends a ping now and then: proxies close idle streams.
 */
export async function followRun(rt: Runtime, scope: TenantScope, run: RunRecord, afterSeq: number, emit: (event: { id?: string; event: string; data: Record<string, unknown> }) => Promise<void>, options: { signal?: AbortSignal; maxMs: number }): Promise<void> {
  const until = rt.clock.now() + options.maxMs;
  let after = afterSeq;
  let pause = 100;
  let lastSent = rt.clock.now();
  for (;;) {
    const events = await runEventsAfter(rt, scope, run.id, after);
    for (const e of events) {
      await emit({ id: String(e.seq), event: e.type, data: { ...e.data, at: e.at } });
      after = e.seq;
      if (e.type === 'done') return;
    }
    if (events.length > 0) lastSent = rt.clock.now();
    else if (rt.clock.now() - lastSent > PING_EVERY_MS) {
      await emit({ event: 'ping', data: {} });
      lastSent = rt.clock.now();
    }
    if (options.signal?.aborted || rt.clock.now() >= until) return;
    await nextRunChange(rt, run.id, Math.min(pause, until - rt.clock.now()));
    pause = events.length > 0 ? 100 : Math.min(1000, pause * 1.5);
  }
}

/** The event that ends a run, and the webhook's post of it. */
export function doneEvent(run: Pick<RunRecord, 'status' | 'reply' | 'usage' | 'error' | 'model' | 'messageId'>): NewRunEvent {
  return { type: 'done', data: { status: run.status, ...(run.reply !== undefined ? { reply: run.reply } : {}), usage: run.usage, ...(run.model ? { model: run.model } : {}), ...(run.messageId ? { messageId: run.messageId } : {}), ...(run.error ? { error: run.error } : {}) } };
}

/** What follows a run's end: off the sweeper's list, the workflow step waiting for it woken, its webhook notified. */
export async function afterRunEnded(rt: Runtime, scope: TenantScope, run: RunRecord): Promise<void> {
  await rt.store.unfinishedWork.remove({ kind: 'run', tenantId: scope.tenantId, id: run.id });
  if (run.parent) await sendSteps(rt, scope, { id: run.parent.executionId, workflowId: run.parent.workflowId }, [run.parent.stepId]);
  if (run.webhook) await notifyWith(rt, scope, run.id, run.webhook, `run.${run.status}`, { run: presentRun(run) });
  await pushRunChange(rt, scope, run);
}

/** Fails a run whose work was lost (the sweeper, after re-driving it did not help). */
export async function failLostRun(rt: Runtime, scope: TenantScope, run: RunRecord, message: string): Promise<void> {
  const ended = { status: 'failed' as const, finishedAt: new Date(rt.clock.now()).toISOString(), error: { code: 'INTERNAL_ERROR', message } };
  const failed = await rt.store.runs.changeRun(scope, run, ['queued', 'in_progress', 'requires_action'], ended, [doneEvent({ ...run, ...ended })]);
  if (failed) await afterRunEnded(rt, scope, failed);
}

/**
 * Cancels a run: nothing starts after this (a tool call already running finishes, and its outcome
 * is not recorded); a run that has ended is a 409.
 */
export async function cancelRun(rt: Runtime, scope: TenantScope, agentId: string, runId: string): Promise<RunRecord> {
  for (;;) {
    const run = await getRun(rt, scope, agentId, runId);
    if (ENDED_RUN_STATUSES.has(run.status)) throw new ConflictError(`Run ${runId} has already ended (${run.status})`, { status: run.status });
    const ended = { status: 'cancelled' as const, finishedAt: new Date(rt.clock.now()).toISOString() };
    const cancelled = await rt.store.runs.changeRun(scope, run, ['queued', 'in_progress', 'requires_action'], ended, [doneEvent({ ...run, ...ended })]);
    if (cancelled) {
      await afterRunEnded(rt, scope, cancelled);
      return cancelled;
    }
  }
}

/** A person's decision on each call a run waits on: the round runs next (a rejected call is reported to the model). */
export async function approveRun(rt: Runtime, scope: TenantScope, agentId: string, runId: string, approvals: ToolApproval[]): Promise<RunRecord> {
  const run = await getRun(rt, scope, agentId, runId);
  if (run.status !== 'requires_action') throw new ConflictError(`Run ${runId} is not waiting for approval (${run.status})`, { status: run.status });
  const pending = run.round ?? [];
  approvals.forEach((a, i) => {
    if (!pending.some((c) => c.id === a.id)) throw new ValidationError(`toolApprovals[${i}].id`, `is not a pending call of this run (${pending.map((c) => c.id).join(', ')})`);
  });
  const undecided = pending.filter((c) => !approvals.some((a) => a.id === c.id));
  if (undecided.length > 0) throw new ValidationError('toolApprovals', `must decide on every pending call: ${undecided.map((c) => c.id).join(', ')} missing`);
  const resumed = await rt.store.runs.changeRun(scope, run, ['requires_action'], { status: 'in_progress', phase: 'tools', approvals, requiredActions: undefined }, [{ type: 'status', data: { status: 'in_progress', approvals } }]);
  if (!resumed) throw new ConflictError(`Run ${runId} was resumed or ended meanwhile`);
  await sendRunStep(rt, scope, resumed);
  return resumed;
}

/**
 * A run that waited for the end user to connect accounts goes on once they have (the OAuth
 * callback): only when every call it waits on waited for an account — a call waiting for a
 * person's approval stays theirs to decide. A call whose account is still missing waits again.
 */
export async function resumeAuthorizedRun(rt: Runtime, scope: TenantScope, agentId: string, runId: string): Promise<RunRecord | undefined> {
  const run = await rt.store.runs.getRun(scope, agentId, runId);
  if (!run || run.status !== 'requires_action' || !run.requiredActions?.length) return undefined;
  const waits = checkpointFrom((run.checkpoint as { turn?: unknown } | undefined)?.turn, run.id).waitingRound?.waits ?? {};
  const pending = run.round ?? [];
  if (pending.length === 0 || !pending.every((c) => waits[c.id]?.actions?.length)) return undefined;
  return approveRun(rt, scope, agentId, runId, pending.map((c) => ({ id: c.id, approved: true })));
}

/** A run as the API shows it: no checkpoint, lease or sealed secret. */
export function presentRun(run: RunRecord) {
  const { checkpoint: _c, leaseUntil: _l, attempt: _a, webhook, round, approvals: _p, seq: _s, deadline, phase: _ph, keyId: _k, requiredActions, ...shown } = run;
  return {
    ...shown,
    expiresAt: new Date(deadline).toISOString(),
    ...(run.status === 'requires_action' && round ? { pendingToolCalls: round.map((c) => ({ id: c.id, tool: c.name, arguments: c.arguments })) } : {}),
    ...(run.status === 'requires_action' && requiredActions?.length ? { requiredActions } : {}),
    ...(webhook ? { webhook: { url: webhook.url, configured: true } } : {}),
  };
}
