import { ConflictError, ValidationError } from '../errors';
import type { ToolCall } from '../models/types';
import type { Runtime } from '../runtime';
import type { TenantScope } from '../tenancy';
import { agents } from './agents';
import { callableTools, runTool, toolContext } from './agent-tools';
import { recordUsage, resolveForTenant } from '../usage';
import { meteringSearches } from '../search/search-meter';
import type { ConverseInput, PausedState, PreparedConversation, Progress, ToolApproval, ToolCallRecord, TurnEvent } from './turn-state';

/**
 * A turn's tool use: running a round of calls (approved ones only, where a person must approve),
 * pausing a turn for approval, and taking a paused turn back to resume it.
 */

const toolOf = (prepared: Pick<PreparedConversation, 'tools'>, name: string) => prepared.tools.find((t) => t.name === name);
export const needsApproval = (prepared: PreparedConversation, calls: ToolCall[]) => prepared.persist && calls.some((c) => toolOf(prepared, c.name)?.requireApproval);

/**
 * Runs the tools a step asked for (in parallel), adds the round to the request and the calls (and
 * any searches they made) to the turn's progress, and reports each call; a failing or unknown tool
 * is an error the model is told about.
 */
export async function runToolRound(
  rt: Runtime,
  scope: TenantScope,
  prepared: PreparedConversation,
  progress: Progress,
  calls: ToolCall[],
  signal: AbortSignal | undefined,
  emit: (event: TurnEvent) => void,
  approvals?: Map<string, ToolApproval>,
): Promise<void> {
  for (const call of calls) emit({ type: 'tool_call', call: { id: call.id, tool: call.name, arguments: call.arguments } });
  const records = await meteringSearches(progress, () => Promise.all(
    calls.map(async (call): Promise<ToolCallRecord> => {
      const tool = toolOf(prepared, call.name);
      const started = performance.now();
      const approval = approvals?.get(call.id);
      const outcome = !tool
        ? { ok: false as const, error: `There is no tool named ${call.name}` }
        : tool.requireApproval && !approval
          ? { ok: false as const, error: 'This call needs a person’s approval, which could not be asked for here' }
          : approval && !approval.approved
            ? { ok: false as const, error: `A person rejected this call${approval.reason ? `: ${approval.reason}` : ''}` }
            : await runTool(tool, call.arguments, toolContext(rt, scope, prepared.agent, { signal, keyId: prepared.keyId }), call.id);
      const record = { id: call.id, tool: call.name, arguments: call.arguments, ...(outcome.ok ? { result: outcome.result } : { error: outcome.error }), durationMs: Math.round(performance.now() - started) };
      emit({ type: 'tool_result', call: record });
      return record;
    }),
  ));
  prepared.request.toolRounds = [
    ...(prepared.request.toolRounds ?? []),
    { calls, results: records.map((r) => ({ id: r.id, name: r.tool, content: r.result ?? r.error ?? '', isError: r.error !== undefined })) },
  ];
  progress.toolCalls.push(...records);
}

/**
 * Counts what the turn used since it was last counted (a paused turn is counted when it pauses,
 * the rest when it finishes), and marks it counted.
 */
export async function billTurn(rt: Runtime, scope: TenantScope, prepared: PreparedConversation, progress: Progress): Promise<void> {
  const billed = progress.billed ?? { inputTokens: 0, outputTokens: 0, toolCalls: 0, modelCalls: 0 };
  const now = {
    inputTokens: progress.usage.inputTokens,
    outputTokens: progress.usage.outputTokens,
    toolCalls: progress.toolCalls.length,
    modelCalls: progress.modelCalls ?? 0,
    searches: progress.searches,
    readUnits: progress.readUnits,
  };
  await recordUsage(rt, scope, {
    keyId: prepared.keyId,
    subject: { kind: 'agent', id: prepared.agent.id },
    model: prepared.resolved.name,
    inputTokens: now.inputTokens - billed.inputTokens,
    outputTokens: now.outputTokens - billed.outputTokens,
    requests: now.modelCalls - billed.modelCalls,
    toolCalls: now.toolCalls - billed.toolCalls,
    searches: now.searches - (billed.searches ?? 0),
    readUnits: now.readUnits - (billed.readUnits ?? 0),
  });
  progress.billed = now;
}

/** Pauses the turn until a person decides on its calls; the answer says which calls wait. */
export async function pauseTurn(rt: Runtime, scope: TenantScope, prepared: PreparedConversation, calls: ToolCall[], progress: Progress) {
  await billTurn(rt, scope, prepared, progress);
  const state: PausedState = { keyId: prepared.keyId, request: prepared.request, sources: prepared.sources, receivedAt: prepared.receivedAt, userId: prepared.userId, pendingCalls: calls, progress };
  if (!(await rt.store.pausedTurns.pause(scope, prepared.agent.id, prepared.sessionId, state as unknown as Record<string, unknown>))) {
    throw new ConflictError('A turn of this session is already waiting for tool approval');
  }
  return {
    agentId: prepared.agent.id,
    sessionId: prepared.sessionId,
    status: 'requires_action' as const,
    reply: '',
    model: prepared.resolved.name,
    sources: prepared.sources,
    usage: progress.usage,
    finishReason: 'requires_action',
    pendingToolCalls: calls.map((c) => ({ id: c.id, tool: c.name, arguments: c.arguments })),
    ...(progress.toolCalls.length > 0 ? { toolCalls: progress.toolCalls } : {}),
  };
}

/**
 * Takes the session's paused turn back with a decision on every pending call (exactly once: a
 * second resume finds nothing and is a 409), and runs the approved calls.
 */
export async function resumeTurn(rt: Runtime, scope: TenantScope, agentId: string, input: ConverseInput) {
  if (!input.sessionId) throw new ValidationError('context.sessionId', 'is required to resume a turn with toolApprovals');
  const agent = await agents.get(rt, scope, agentId);
  const waiting = (await rt.store.pausedTurns.peek(scope, agent.id, input.sessionId)) as PausedState | undefined;
  if (!waiting) throw new ConflictError(`No turn of session ${input.sessionId} is waiting for tool approval (already resumed, or never paused)`);
  const approvals = new Map((input.toolApprovals ?? []).map((a) => [a.id, a]));
  (input.toolApprovals ?? []).forEach((a, i) => {
    if (!waiting.pendingCalls.some((c) => c.id === a.id)) throw new ValidationError(`toolApprovals[${i}].id`, `is not a pending call of this turn (${waiting.pendingCalls.map((c) => c.id).join(', ')})`);
  });
  const tools = await callableTools(toolContext(rt, scope, agent));
  const undecided = waiting.pendingCalls.filter((c) => toolOf({ tools }, c.name)?.requireApproval && !approvals.has(c.id));
  if (undecided.length > 0) throw new ValidationError('toolApprovals', `must decide on every pending call: ${undecided.map((c) => c.id).join(', ')} missing`);
  const state = (await rt.store.pausedTurns.take(scope, agent.id, input.sessionId)) as PausedState | undefined;
  if (!state) throw new ConflictError(`No turn of session ${input.sessionId} is waiting for tool approval (already resumed, or never paused)`);
  const resolved = await resolveForTenant(rt, scope, agent.model);
  const prepared: PreparedConversation = {
    agent,
    tools,
    clientTools: new Set(),
    sessionId: input.sessionId,
    resolved,
    request: state.request,
    sources: state.sources,
    skipped: [],
    persist: true,
    receivedAt: state.receivedAt,
    userId: state.userId,
    // Counted against the key that resumes it (the one that started it, when resumed without one).
    keyId: input.keyId ?? state.keyId,
    budget: resolved.budget,
  };
  // Turns paused before searches were counted carry no search counts.
  const progress: Progress = { ...state.progress, searches: state.progress.searches ?? 0, readUnits: state.progress.readUnits ?? 0 };
  return { prepared, progress, pendingCalls: state.pendingCalls, approvals };
}
