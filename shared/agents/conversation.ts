import { config } from '../config';
import { newId } from '../ids';
import { addUsage, approximateTokens, type ChatMessage, type ChatResult, type ResolvedModel } from '../models/types';
import { aroundEachCall } from '../models/around-each-call';
import { inFormat } from '../models/structured-output';
import { searchSource } from '../search/search';
import { log, errorFields } from '../log';
import { extractMemory, type Extraction } from '../memory/extract';
import { extractWithModel } from '../memory/llm-extract';
import { rememberedFacts } from '../memory/query-memory';
import { recordEpisode, type Turn } from '../memory/record-episode';
import type { TenantScope } from '../tenancy';
import type { Agent } from './agent-schema';
import { agents } from './agents';
import { callableTools, toolContext } from './agent-tools';
import { budgetAfter, resolveForTenant } from '../usage';
import { AppError, ConflictError, ValidationError } from '../errors';
import { meteringSearches } from '../search/search-meter';
import { billTurn, needsApproval, pauseTurn, resumeTurn, runToolRound } from './turn-tools';
import type { ConverseInput, PausedState, PreparedConversation, Progress, TurnEvent } from './turn-state';

export type { ConverseInput, ConverseSource, PreparedConversation, ToolApproval, ToolCallRecord, TurnEvent } from './turn-state';
import type { KnowledgeSourceRecord } from '../knowledge';
import type { AgentTurn, Runtime } from '../runtime';

/** Turns of the session a model is given (the newest). */
export const HISTORY_WINDOW = 20;
const PASSAGES = 5;

/** Tool rounds a turn may take before it must answer, for agents stored before the setting existed. */
export const MAX_TOOL_STEPS = 5;
const stepsOf = (agent: Agent) => agent.maxToolSteps ?? MAX_TOOL_STEPS;

/** Passages from the agent's ready sources for the message and the previous user turn. */
async function ground(rt: Runtime, scope: TenantScope, agent: Agent, message: string, history: ChatMessage[]) {
  const previous = [...history].reverse().find((m) => m.role === 'user')?.content ?? '';
  const query = `${message} ${previous}`.slice(0, 4000);
  const skipped: PreparedConversation['skipped'] = [];
  const found = await Promise.all(
    agent.knowledgeSourceIds.map(async (id) => {
      const source = await rt.store.records.getRecord<KnowledgeSourceRecord>(scope, 'KS', id);
      if (!source || source.status !== 'ready') {
        skipped.push({ knowledgeSourceId: id, status: source?.status ?? 'deleted' });
        return [];
      }
      const { results, mode } = await searchSource(rt, scope, source, { query, topK: PASSAGES, searchMode: agent.searchMode ?? 'hybrid' });
      return results.map((r, rank) => ({ ...r, knowledgeSourceId: id, rank, mode }));
    }),
  );
  // Scores of a hybrid search (fused ranks) and a lexical one (BM25F) cannot be compared: sources
  // searched different ways are merged by their ranks (reciprocal rank fusion) instead.
  const all = found.flat();
  const mixed = new Set(all.map((r) => r.mode)).size > 1;
  const best = all.sort((a, b) => (mixed ? 1 / (61 + b.rank) - 1 / (61 + a.rank) : b.score - a.score)).slice(0, PASSAGES);
  return {
    passages: best.map((r) => ({ title: r.title, text: r.text })),
    sources: best.map((r) => ({
      knowledgeSourceId: r.knowledgeSourceId,
      documentId: r.documentId,
      ...(r.path !== undefined ? { path: r.path } : { rowKey: r.rowKey }),
      chunkId: r.chunkId,
      score: r.score,
      snippet: r.text.length > 300 ? `${r.text.slice(0, 297)}…` : r.text,
      ...(r.location ? { location: r.location } : {}),
    })),
    skipped,
  };
}

async function prepareConversation(rt: Runtime, scope: TenantScope, agentId: string, input: ConverseInput): Promise<PreparedConversation> {
  const agent = await agents.get(rt, scope, agentId);
  const sessionId = input.sessionId ?? newId('session', rt.clock.now());
  const history =
    input.history ??
    (await rt.store.sessions.recentMessages(scope, agent.id, sessionId, HISTORY_WINDOW)).map((m) => ({ role: m.role, content: m.content }));
  const tools = agent.tools ?? [];
  // A paused turn must be resumed (or the session deleted) before the conversation goes on.
  if (input.sessionId && input.history === undefined && tools.some((t) => t.requireApproval)) {
    const paused = (await rt.store.pausedTurns.peek(scope, agent.id, input.sessionId)) as PausedState | undefined;
    if (paused) {
      throw new ConflictError('A turn of this session is waiting for tool approval: resume it with toolApprovals first', {
        pendingToolCalls: paused.pendingCalls.map((c) => ({ id: c.id, tool: c.name, arguments: c.arguments })),
      });
    }
  }
  // With a knowledge_search tool the model decides when to search; without, every turn is grounded.
  const [grounded, resolved, memory, callables] = await Promise.all([
    agent.capabilities.includes('document-search') && agent.knowledgeSourceIds.length > 0 && !tools.some((t) => t.type === 'knowledge_search')
      ? ground(rt, scope, agent, input.message, history)
      : undefined,
    resolveForTenant(rt, scope, agent.model),
    input.userId && input.history === undefined ? rememberedFacts(rt, scope, agent.id, input.userId) : Promise.resolve(undefined),
    // Listing an MCP server's tools is a network call: only when the model may call tools this turn.
    tools.length > 0 && input.toolChoice !== 'none' ? callableTools(toolContext(rt, scope, agent)) : [],
  ]);
  for (const [i, clientTool] of (input.clientTools ?? []).entries()) {
    if (callables.some((t) => t.name === clientTool.name)) throw new ValidationError(`tools[${i}].function.name`, `is ${clientTool.name}, a tool the agent has itself`);
  }
  if (tools.length + (input.clientTools?.length ?? 0) > 0 && !resolved.engine.supportsTools) {
    throw new AppError('UNPROCESSABLE', `Agent ${agent.id} has tools, and its model ${resolved.name} cannot call tools: choose a model that can, or remove the tools`, { field: 'tools', model: resolved.name });
  }
  return {
    agent,
    tools: callables,
    sessionId,
    resolved,
    clientTools: new Set((input.clientTools ?? []).map((t) => t.name)),
    sources: grounded?.sources ?? [],
    skipped: grounded?.skipped ?? [],
    persist: input.history === undefined,
    receivedAt: rt.clock.now(),
    userId: input.userId,
    keyId: input.keyId,
    budget: resolved.budget,
    request: {
      model: resolved.model,
      messages: [...history, { role: 'user', content: input.message }],
      instructions: [agent.instructions, input.instructions].filter(Boolean).join('\n\n') || undefined,
      passages: grounded?.passages,
      ...(memory && memory.length > 0 ? { memory } : {}),
      temperature: input.settings?.temperature ?? agent.temperature,
      maxTokens: input.settings?.maxTokens ?? agent.maxTokens,
      ...(input.settings?.topP !== undefined ? { topP: input.settings.topP } : {}),
      ...(input.settings?.stop?.length ? { stop: input.settings.stop } : {}),
      ...(input.toolChoice !== 'none' && callables.length + (input.clientTools?.length ?? 0) > 0
        ? { tools: [...callables.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })), ...(input.clientTools ?? [])] }
        : {}),
      ...(input.toolRounds?.length ? { toolRounds: input.toolRounds } : {}),
      ...(input.responseFormat ? { responseFormat: input.responseFormat } : {}),
      ...(input.toolChoice && input.toolChoice !== 'none' ? { toolChoice: input.toolChoice } : {}),
      agent: {
        name: agent.name,
        description: agent.description,
        ...(grounded === undefined && agent.knowledgeSourceIds.length > 0 ? { unsearchedSources: agent.knowledgeSourceIds.length } : {}),
      },
    },
  };
}

/** A whole reply as a stream with no deltas: the generator's return value is the result. */
async function* whole(result: Promise<ChatResult>): AsyncGenerator<string, ChatResult> {
  return await result;
}


/** The step limit ran out with the model still calling tools: say so rather than answer nothing. */
const stepLimitReply = (result: ChatResult, steps: number): ChatResult => ({
  ...result,
  text: result.text || `I stopped after ${steps} rounds of tool calls without reaching an answer.`,
  finishReason: 'other',
  toolCalls: undefined,
});

/**
 * Stores the turn (for Cairn sessions) and shapes the API's answer. The turn is billed with what
 * remembering it cost (a configured model extracts its memory), even when storing it fails.
 */
async function finishConversation(rt: Runtime, scope: TenantScope, prepared: PreparedConversation, result: ChatResult & { output?: unknown }, progress: Progress) {
  const { agent, sessionId, resolved, sources } = prepared;
  const toolCalls = progress.toolCalls;
  const memory = { usage: { inputTokens: 0, outputTokens: 0 }, calls: 0 };
  try {
    if (prepared.persist) {
      const question = prepared.request.messages[prepared.request.messages.length - 1]!.content;
      // Ids are time-ordered: the reply's time is strictly after the question's, so they list in order.
      const asked = prepared.receivedAt;
      const answered = Math.max(rt.clock.now(), asked + 1);
      await rt.store.sessions.appendMessages(scope, agent.id, sessionId, [
        { id: newId('message', asked), role: 'user', content: question, createdAt: new Date(asked).toISOString() },
        {
          id: newId('message', answered),
          role: 'assistant',
          content: result.text,
          createdAt: new Date(answered).toISOString(),
          sources,
          model: resolved.name,
          ...(result.finishReason === 'interrupted' ? { interrupted: true } : {}),
          ...(toolCalls.length > 0 ? { toolCalls } : {}),
        },
      ]);
      // Independent writes: the session's index entry and the memory of the turn.
      const counted = countingCalls(resolved, memory);
      await Promise.all([
        rt.store.sessions.touchSession(scope, { agentId: agent.id, sessionId, userId: prepared.userId, at: new Date(answered).toISOString(), messages: 2 }),
        rememberTurn(rt, scope, { agentId: agent.id, sessionId, userId: prepared.userId, text: question, reply: result.text, at: new Date(asked) }, counted),
      ]);
    }
  } finally {
    await billTurn(rt, scope, prepared, { ...progress, usage: addUsage(result.usage, memory.usage), modelCalls: (progress.modelCalls ?? 0) + memory.calls });
  }
  return {
    agentId: agent.id,
    sessionId,
    reply: result.text,
    model: resolved.name,
    sources,
    usage: result.usage,
    finishReason: result.finishReason,
    status: 'completed' as const,
    ...(result.output !== undefined ? { output: result.output } : {}),
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
    // Calls of the caller's own tools, for the caller to run (OpenAI-style).
    ...(result.finishReason === 'tool_calls' && result.toolCalls?.length ? { clientToolCalls: result.toolCalls } : {}),
  };
}

/** The model, adding the tokens and calls of every call made through it to `tally`. */
function countingCalls(resolved: ResolvedModel, tally: { usage: ChatResult['usage']; calls: number }): ResolvedModel {
  const add = (_: unknown, result: ChatResult | undefined) => {
    if (!result) return;
    tally.usage = addUsage(tally.usage, result.usage);
    tally.calls++;
  };
  return { ...resolved, engine: aroundEachCall(resolved.engine, { start: () => undefined, end: add }) };
}

/** With a real provider configured, the model extracts memory; the rules when it cannot. */
async function extractionOf(text: string, resolved: ResolvedModel): Promise<Extraction> {
  if (resolved.engine.provider === 'local') return extractMemory(text);
  try {
    return await extractWithModel(resolved, text, modelDeadline());
  } catch (error) {
    log.warn('model memory extraction failed; using the rules', { model: resolved.name, ...errorFields(error) });
    return extractMemory(text);
  }
}

/**
 * Adds the turn to the memory graph. The conversation is already stored and answered: a memory
 * failure is logged, never turned into a failed turn.
 */
async function rememberTurn(rt: Runtime, scope: TenantScope, turn: Turn, resolved: ResolvedModel): Promise<void> {
  try {
    await recordEpisode(rt, scope, turn, await extractionOf(turn.text, resolved));
  } catch (error) {
    log.error('memory not recorded', { tenantId: scope.tenantId, agentId: turn.agentId, sessionId: turn.sessionId, ...errorFields(error) });
  }
}

export function modelDeadline(): AbortSignal {
  return AbortSignal.timeout(config.modelTimeoutMs);
}

export type ConverseResult = Awaited<ReturnType<typeof finishConversation>> | Awaited<ReturnType<typeof pauseTurn>>;

/** A new turn, or the resumption of a paused one (its approved calls run first). */
async function startTurn(rt: Runtime, scope: TenantScope, agentId: string, input: ConverseInput, signal: AbortSignal | undefined, emit: (event: TurnEvent) => void) {
  if (!input.toolApprovals) {
    const progress: Progress = { toolCalls: [], usage: { inputTokens: 0, outputTokens: 0 }, step: 0, searches: 0, readUnits: 0 };
    return { prepared: await meteringSearches(progress, () => prepareConversation(rt, scope, agentId, input)), progress };
  }
  const resumed = await resumeTurn(rt, scope, agentId, input);
  await runToolRound(rt, scope, resumed.prepared, resumed.progress, resumed.pendingCalls, signal, emit, resumed.approvals);
  return resumed;
}

/** The model call ends at the deadline, or as soon as the caller goes away (`signal`). */
function modelSignal(signal: AbortSignal | undefined): AbortSignal {
  return signal ? AbortSignal.any([modelDeadline(), signal]) : modelDeadline();
}

/**
 * What follows a model step: the turn ends (answered, its calls handed to the caller, or paused for
 * approval) and its answer is returned, or its tool calls run and the loop goes on (undefined).
 * `streamed`: the text a streamed turn has sent so far. Events (tool calls, a checked structured
 * reply) go to `emit`.
 */
async function afterStep(
  rt: Runtime,
  scope: TenantScope,
  prepared: PreparedConversation,
  progress: Progress,
  result: ChatResult,
  streamed: string,
  signal: AbortSignal | undefined,
  emit: (event: TurnEvent) => void,
): Promise<ConverseResult | undefined> {
  progress.usage = addUsage(progress.usage, result.usage);
  progress.modelCalls = (progress.modelCalls ?? 0) + 1;
  if (result.finishReason !== 'tool_calls' || !result.toolCalls?.length || progress.step >= stepsOf(prepared.agent)) {
    const final = await inFormat(prepared.resolved, prepared.request, { ...(result.finishReason === 'tool_calls' ? stepLimitReply(result, stepsOf(prepared.agent)) : result), usage: progress.usage }, modelSignal(signal));
    // A reply in a required format is checked whole before it is sent: it comes as one delta.
    if (prepared.request.responseFormat) emit({ type: 'delta', text: final.text });
    return finishConversation(rt, scope, prepared, { ...final, text: streamed || final.text }, progress);
  }
  const forCaller = result.toolCalls.filter((c) => prepared.clientTools.has(c.name));
  if (forCaller.length > 0) return finishConversation(rt, scope, prepared, { ...result, text: streamed || result.text, toolCalls: forCaller, usage: progress.usage }, progress);
  if (needsApproval(prepared, result.toolCalls)) return pauseTurn(rt, scope, prepared, result.toolCalls, progress);
  await runToolRound(rt, scope, prepared, progress, result.toolCalls, signal, emit);
  progress.step++;
  return undefined;
}

/** One turn, answered whole. `skipped`: the agent's sources that were not ready. */
export async function converse(rt: Runtime, scope: TenantScope, agentId: string, input: ConverseInput, options: { signal?: AbortSignal } = {}) {
  const { prepared, progress } = await startTurn(rt, scope, agentId, input, options.signal, () => undefined);
  for (;;) {
    const result = await prepared.resolved.engine.generate(prepared.request, modelSignal(options.signal));
    const done = await afterStep(rt, scope, prepared, progress, result, '', options.signal, () => undefined);
    if (done) return { data: done, skipped: prepared.skipped, budget: budgetAfter(prepared.budget, done.usage) };
  }
}

/**
 * One turn, streamed: what is known before the model answers, then `deltas()` yields the reply's
 * text as it comes and returns the finished turn (stored like a whole one). When the caller goes
 * away (`signal`), the model call is cancelled and the partial reply is stored marked interrupted.
 */
export async function converseStream(rt: Runtime, scope: TenantScope, agentId: string, input: ConverseInput, options: { signal?: AbortSignal } = {}) {
  // A resumed turn's approved calls run before the stream starts; their events lead it.
  const early: TurnEvent[] = [];
  const { prepared, progress } = await startTurn(rt, scope, agentId, input, options.signal, (event) => early.push(event));
  return {
    agentId: prepared.agent.id,
    sessionId: prepared.sessionId,
    model: prepared.resolved.name,
    sources: prepared.sources,
    skipped: prepared.skipped,
    budget: prepared.budget,
    async *deltas(): AsyncGenerator<TurnEvent, ConverseResult> {
      let text = '';
      for (const event of early) yield event;
      try {
        for (;;) {
          // A reply in a required format is checked whole before it is sent (afterStep sends it).
          const generator = prepared.request.responseFormat ? whole(prepared.resolved.engine.generate(prepared.request, modelSignal(options.signal))) : prepared.resolved.engine.stream(prepared.request, modelSignal(options.signal));
          let step = await generator.next();
          for (; !step.done; step = await generator.next()) {
            text += step.value;
            yield { type: 'delta', text: step.value };
          }
          const events: TurnEvent[] = [];
          const done = await afterStep(rt, scope, prepared, progress, step.value, text, options.signal, (event) => events.push(event));
          for (const event of events) yield event;
          if (done) return done;
        }
      } catch (error) {
        if (!options.signal?.aborted) throw error;
        const usage = { inputTokens: progress.usage.inputTokens, outputTokens: progress.usage.outputTokens + approximateTokens(text) };
        await finishConversation(rt, scope, prepared, { text, usage, finishReason: 'interrupted' }, progress);
        throw error;
      }
    },
  };
}

/** A turn as workflow `agent` steps take it (given to the runtimes that run steps). */
export const agentTurn: AgentTurn = async (rt, scope, agentId, input, signal) => (await converse(rt, scope, agentId, input, { signal })).data;
