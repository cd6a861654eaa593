import { createHash } from 'node:crypto';
import { z } from 'zod';
import { config } from '../config';
import { AppError, isRetryable } from '../errors';
import { errorFields, log } from '../log';
import type { ChatResult, ToolCall } from '../models/types';
import type { RunMessage } from '../queue/messages';
import type { Delivery } from '../queue/queue';
import { checkBackSeconds, whileLeased } from '../queue/work-lease';
import type { Runtime } from '../runtime';
import { shortenedResult } from '../models/context-window';
import { CHECKPOINT_BYTES, ENDED_RUN_STATUSES, packedSize, type NewRunEvent, type RunRecord } from '../store/runs';
import { inSpan, SpanKind } from '../telemetry';
import { scopeOf, type TenantScope } from '../tenancy';
import { afterRunEnded, doneEvent, sendRunStep } from './runs';
import { pushRunChange } from './run-push';
import { billFailed, billTurn, checkpointFrom, checkpointOf, decisionsOf, handOff, requiredActionsOf, runToolRound, saveTurnVault, stepOutcome, turnFromCheckpoint, type Turn, type TurnCheckpoint } from './turn';

/**
 * The steps of a background run, as the steps queue's worker takes them: each message claims the
 * run's position (step, phase) on a lease, continues the turn from the run's checkpoint, does one
 * thing — call the model, or run the round of tool calls it asked for — and records the outcome
 * (the new position, the checkpoint, the step's events) in one conditional write before sending
 * the next message. A recorded step is never done again: a duplicate finds the run moved on; a
 * worker that dies mid-step loses its lease and the redelivered message does the step again — a
 * tool call may then be made twice, with the same Idempotency-Key.
 */
const checkpointShape = z.object({
  turn: z.unknown(),
  exchange: z.object({ questionId: z.string(), replyId: z.string() }),
  persist: z.boolean(),
  store: z.boolean(),
});
type RunCheckpoint = { turn: TurnCheckpoint } & Omit<z.infer<typeof checkpointShape>, 'turn'>;

function checkpointOfRun(run: RunRecord): RunCheckpoint {
  const parsed = checkpointShape.parse(run.checkpoint);
  return { ...parsed, turn: checkpointFrom(parsed.turn, run.id) };
}

/** The run's turn as its checkpoint left it. */
async function turnOf(rt: Runtime, scope: TenantScope, run: RunRecord): Promise<{ turn: Turn; kept: RunCheckpoint }> {
  const kept = checkpointOfRun(run);
  const turn = await turnFromCheckpoint(rt, scope, run.agentId, run.sessionId, kept.turn, { model: run.phase === 'model' });
  Object.assign(turn, { persist: kept.persist, store: kept.store, exchange: kept.exchange });
  return { turn, kept };
}

/** A checkpoint small enough for the run's item: the oldest tool results are cut short first (the model saw them whole). */
function compacted(turn: Turn, kept: RunCheckpoint): RunCheckpoint {
  let checkpoint: RunCheckpoint = { ...kept, turn: checkpointOf(turn) };
  const rounds = turn.request.toolRounds ?? [];
  for (let upTo = 0; packedSize(checkpoint) > CHECKPOINT_BYTES && upTo < rounds.length; upTo++) {
    const round = rounds[upTo]!;
    round.results = round.results.map((r) => ({ ...r, content: shortenedResult(r.content) }));
    checkpoint = { ...kept, turn: checkpointOf(turn) };
  }
  return checkpoint;
}

/**
 * A step's record, written while its usage is: the two are independent writes (a step done again
 * after a crash between them is billed again either way), and together they take one round trip.
 */
async function recordedAfter(billing: Promise<void>, recording: Promise<RunRecord | undefined>): Promise<RunRecord | undefined> {
  const [billed, recorded] = await Promise.allSettled([billing, recording]);
  if (recorded.status === 'rejected') throw recorded.reason;
  // The step is recorded: the run goes on (a step done again would repeat its effects for a count).
  if (billed.status === 'rejected') log.error('run step usage not counted', { runId: recorded.value?.id, ...errorFields(billed.reason) });
  return recorded.value;
}

/** The same key on every attempt of one call of one round of one run. */
const idempotencyKeyOf = (run: RunRecord, call: ToolCall) => createHash('sha256').update(`${run.id}\u0000${run.step}\u0000${call.id}`).digest('hex').slice(0, 40);

const usageOf = (turn: Turn) => ({ ...turn.progress.usage });

/** A model step: the model is called (at the step limit, without tools: it must answer), and the turn ends, waits for a person or has a round to run. */
async function modelStep(rt: Runtime, scope: TenantScope, claimed: RunRecord, signal: AbortSignal): Promise<RunRecord | undefined> {
  const { turn, kept } = await turnOf(rt, scope, claimed);
  try {
    if (turn.progress.step >= claimed.maxToolSteps) {
      delete turn.request.tools;
      delete turn.request.toolChoice;
    }
    const started = performance.now();
    const result: ChatResult = await turn.resolved.engine.generate(turn.request, signal);
    const events: NewRunEvent[] = [
      {
        type: 'step',
        data: { step: claimed.step, kind: 'model', model: result.model ?? turn.resolved.name, usage: result.usage, finishReason: result.finishReason, durationMs: Math.round(performance.now() - started), ...(result.toolCalls?.length ? { toolCalls: result.toolCalls.map((c) => ({ id: c.id, tool: c.name, arguments: c.arguments })) } : {}) },
      },
      ...(result.text ? [{ type: 'delta', data: { step: claimed.step, text: result.text } }] : []),
    ];
    const used = turn.progress.usage.inputTokens + turn.progress.usage.outputTokens + result.usage.inputTokens + result.usage.outputTokens;
    if (claimed.maxTokens !== undefined && used > claimed.maxTokens && result.finishReason === 'tool_calls') {
      turn.progress.usage = { inputTokens: turn.progress.usage.inputTokens + result.usage.inputTokens, outputTokens: turn.progress.usage.outputTokens + result.usage.outputTokens };
      await billTurn(rt, scope, turn);
      return endClaimed(rt, scope, claimed, { status: 'failed', usage: usageOf(turn), error: { code: 'QUOTA_EXCEEDED', message: `The run used ${used} tokens, past its budget of ${claimed.maxTokens}` } }, events);
    }
    const outcome = await stepOutcome(rt, scope, turn, result, { maxSteps: claimed.maxToolSteps, signal });
    await saveTurnVault(rt, scope, turn);
    if ('ended' in outcome) {
      const done = outcome.ended;
      return endClaimed(
        rt,
        scope,
        claimed,
        {
          status: 'completed',
          reply: done.reply,
          sources: done.sources,
          usage: done.usage,
          model: done.model,
          ...('messageId' in done && done.messageId ? { messageId: done.messageId } : {}),
          ...('output' in done && done.output !== undefined ? { output: done.output } : {}),
        },
        events,
      );
    }
    if ('handoff' in outcome) {
      // The target's turn goes on from the next model step (what the handing agent used is counted as it hands over).
      const next = await handOff(rt, scope, turn, outcome.handoff, undefined, signal);
      await saveTurnVault(rt, scope, next);
      const handoff = next.handoffs[next.handoffs.length - 1]!;
      return rt.store.runs.recordStep(scope, claimed, { step: claimed.step + 1, checkpoint: compacted(next, kept), usage: usageOf(next) }, [...events, { type: 'handoff', data: { step: claimed.step, ...handoff } }]);
    }
    // Billing marks what it counts in the turn at once: the checkpoint after it says so.
    const billed = billTurn(rt, scope, turn);
    const checkpoint = compacted(turn, kept);
    if ('approval' in outcome) {
      const pending = turn.guard ? turn.guard.storedJson(outcome.approval) : outcome.approval;
      const waiting = await recordedAfter(
        billed,
        rt.store.runs.recordStep(scope, claimed, { status: 'requires_action', round: pending, checkpoint, usage: usageOf(turn) }, [
          ...events,
          { type: 'requires_action', data: { pendingToolCalls: pending.map((c) => ({ id: c.id, tool: c.name, arguments: c.arguments })) } },
        ]),
      );
      // Its client is told it waits (A2A: input-required).
      if (waiting) await pushRunChange(rt, scope, waiting);
      return waiting;
    }
    return recordedAfter(billed, rt.store.runs.recordStep(scope, claimed, { phase: 'tools', round: turn.guard ? turn.guard.storedJson(outcome.round) : outcome.round, checkpoint, usage: usageOf(turn) }, events));
  } catch (error) {
    await billFailed(rt, scope, turn);
    throw error;
  }
}

/** A tool step: the round the model asked for runs (each call judged again; a person's decisions apply), and the model is next. */
async function toolStep(rt: Runtime, scope: TenantScope, claimed: RunRecord, signal: AbortSignal): Promise<RunRecord | undefined> {
  const { turn, kept } = await turnOf(rt, scope, claimed);
  const stored = claimed.round ?? [];
  // Calls kept with tokens act on the values again (the model's round keeps its own tokens).
  const calls = turn.guard ? stored.map((c) => ({ ...c, ...(c.arguments ? { arguments: turn.guard!.restoreArgs(c.arguments) } : {}) })) : stored;
  const decided = await decisionsOf(scope, turn, calls);
  const approvals = new Map((claimed.approvals ?? []).map((a) => [a.id, a]));
  const { records, waiting } = await runToolRound(rt, scope, turn, calls, signal, () => undefined, decided, { approvals, idempotencyKeyOf: (call) => idempotencyKeyOf(claimed, call), runId: claimed.id });
  // The vault first: the checkpoint may hold tokens only it restores.
  await saveTurnVault(rt, scope, turn);
  const billed = billTurn(rt, scope, turn);
  const shown = turn.guard ? turn.guard.storedJson(records) : records;
  const events: NewRunEvent[] = shown.map((r) => ({ type: 'step', data: { step: claimed.step, kind: 'tool', id: r.id, tool: r.tool, arguments: r.arguments, ...(r.error !== undefined ? { error: r.error } : { result: r.result }), durationMs: r.durationMs } }));
  if (waiting) {
    // Calls that wait for a person (an asked agent's approval, a remote task's input): the run waits with them, its round unfinished.
    const pending = turn.guard ? turn.guard.storedJson(waiting) : waiting;
    const asks = turn.waitingRound?.waits ?? {};
    const actions = requiredActionsOf(asks);
    const paused = await recordedAfter(
      billed,
      rt.store.runs.recordStep(scope, claimed, { status: 'requires_action', round: pending, approvals: undefined, requiredActions: actions.length > 0 ? actions : undefined, checkpoint: compacted(turn, kept), usage: usageOf(turn) }, [
        ...events,
        { type: 'requires_action', data: { pendingToolCalls: pending.map((c) => ({ id: c.id, tool: c.name, arguments: c.arguments, ...(asks[c.id] ? { asks: asks[c.id]!.asks } : {}) })), ...(actions.length > 0 ? { requiredActions: actions } : {}) } },
      ]),
    );
    if (paused) await pushRunChange(rt, scope, paused);
    return paused;
  }
  turn.progress.step++;
  return recordedAfter(billed, rt.store.runs.recordStep(scope, claimed, { phase: 'model', step: claimed.step + 1, round: undefined, approvals: undefined, checkpoint: compacted(turn, kept), usage: usageOf(turn) }, events));
}

/** Ends a run whose step this delivery holds: its final fields and the done event, then its webhook. */
async function endClaimed(rt: Runtime, scope: TenantScope, claimed: RunRecord, final: Partial<RunRecord> & Pick<RunRecord, 'status' | 'usage'>, events: NewRunEvent[]): Promise<RunRecord | undefined> {
  const ended = { ...final, round: undefined, finishedAt: new Date(rt.clock.now()).toISOString() };
  const recorded = await rt.store.runs.recordStep(scope, claimed, ended, [...events, doneEvent({ ...claimed, ...ended })]);
  if (recorded) await afterRunEnded(rt, scope, recorded);
  return recorded;
}

/** Ends a run no step holds (its time ran out before its next step): read again and retry when it changed meanwhile. */
async function expire(rt: Runtime, scope: TenantScope, run: RunRecord): Promise<void> {
  for (let current: RunRecord | undefined = run; current && (current.status === 'queued' || current.status === 'in_progress'); current = await rt.store.runs.getRun(scope, run.agentId, run.id)) {
    const ended = { status: 'expired' as const, finishedAt: new Date(rt.clock.now()).toISOString(), error: { code: 'EXPIRED', message: `The run did not finish within its maxDurationSeconds (${Math.round((current.deadline - Date.parse(current.createdAt)) / 1000)} s)` } };
    const expired = await rt.store.runs.changeRun(scope, current, ['queued', 'in_progress'], ended, [doneEvent({ ...current, ...ended })]);
    if (expired) return afterRunEnded(rt, scope, expired);
  }
}

/** One step of a run (see the top of this file); a step that fails for good fails the run. */
export function consumeRunMessage(rt: Runtime, message: RunMessage, delivery: Delivery): Promise<void> {
  return inSpan(`agent.run.${message.phase}`, { kind: SpanKind.CONSUMER, attributes: { 'cairn.tenant.id': message.tenantId, 'cairn.agent.id': message.agentId, 'cairn.run.id': message.runId, 'cairn.run.step': message.step, 'cairn.delivery': delivery.receiveCount } }, () =>
    runStep(rt, message, delivery),
  );
}

async function runStep(rt: Runtime, message: RunMessage, delivery: Delivery): Promise<void> {
  const scope = scopeOf(message.tenantId);
  const now = rt.clock.now();
  // The step is claimed at once; only a claim that fails reads the run to see why.
  const claimed = await rt.store.runs.claimStep(scope, { agentId: message.agentId, id: message.runId }, message, config.workLeaseMs);
  if (!claimed) {
    const run = await rt.store.runs.getRun(scope, message.agentId, message.runId);
    if (!run || ENDED_RUN_STATUSES.has(run.status) || run.status === 'requires_action') return;
    // A duplicate, or a message late for a position the run has left.
    if (run.step !== message.step || run.phase !== message.phase) return;
    if (now > run.deadline) return expire(rt, scope, run);
    // Another delivery runs it; if that worker died its lease runs out: look again just after.
    if (run.leaseUntil !== undefined && run.leaseUntil > now) await sendRunStep(rt, scope, run, checkBackSeconds(run.leaseUntil, now));
    return;
  }
  const run = claimed;
  // No call outlives the run's time (nor the model's own limit).
  const signal = AbortSignal.timeout(Math.max(1, Math.min(run.deadline - now, claimed.phase === 'model' ? config.modelTimeoutMs * 3 : config.workLeaseMs * 20)));
  let next: RunRecord | undefined;
  try {
    next = await whileLeased(
      () => rt.store.runs.renewLease(scope, claimed, config.workLeaseMs),
      () => (claimed.phase === 'model' ? modelStep(rt, scope, claimed, signal) : toolStep(rt, scope, claimed, signal)),
    );
  } catch (error) {
    const last = !isRetryable(error) || delivery.receiveCount >= delivery.maxReceives;
    log.warn('run step failed', { runId: run.id, step: run.step, phase: run.phase, attempt: claimed.attempt, last, ...errorFields(error) });
    if (!last) {
      // Let the redelivered message take the step at once instead of waiting out this lease.
      await rt.store.runs.releaseStep(scope, claimed);
      throw error;
    }
    const failure = error instanceof AppError ? { code: error.code, message: error.message } : { code: 'INTERNAL_ERROR', message: `Step ${run.step} (${run.phase}) could not be done` };
    await endClaimed(rt, scope, claimed, { status: 'failed', usage: claimed.usage, error: failure }, []);
    return;
  }
  if (next && !ENDED_RUN_STATUSES.has(next.status) && next.status !== 'requires_action') await sendRunStep(rt, scope, next);
}
