import { z } from '@hono/zod-openapi';
import { newId } from '../ids';
import { addUsage, approximateTokens, type ChatMessage, type ChatRequest, type ChatResult, type ResolvedModel, type ResponseFormat, type ToolCall, type ToolRound, type ToolSpec } from '../models/types';
import { inFormat } from '../models/structured-output';
import { errorFields, log } from '../log';
import { compactedHistory, sessionHistory, type SessionHistory } from './session-compaction';
import { rememberedFacts } from '../memory/query-memory';
import type { TenantScope } from '../tenancy';
import type { Agent } from './agent-schema';
import { callableTools, runTool, toolContext, type CallableTool } from './agent-tools';
import { decideCall, type CallDecision, type RequiredAction, type ToolReply, type ToolResume, type ToolWait } from '../tools';
import { admittedUser, startAuthorization, turnUser, userOfTurn, userView } from '../identity';
import { budgetAfter, modelTally, recordUsage, resolveForTenant, tallied, talliesSince, type TokenBudget } from '../usage';
import { AppError, ConflictError, NotFoundError, ToolFailure, ValidationError } from '../errors';
import { meteringSearches } from '../search/search-meter';
import { converseSource, ground, type ConverseSource, type Grounding } from './grounding';
import { citedOnly, shiftedMarks } from './citations';
import { MAX_AGENT_DEPTH } from './agent-graph';
import { holderOf, transferTools, type Handoff } from './handoffs';
import { turnMemory } from './turn-memory';
import type { AgentTurn, Runtime } from '../runtime';
import { DRAFT } from '../releases';
import { addSpanEvent, withSpanLabels } from '../telemetry';
import { effectiveGuardrails, Guard, guardedModel, openVault, saveVault, tenantGuardrails } from '../guardrails';
import { agentAddress, agentForTurn, type AgentTarget, type AgentVersionRef } from './agent-releases';

const agentVersionRef = z.union([z.number(), z.literal(DRAFT)]);

/**
 * An agent's turn, whole: it is prepared once (a new turn from the request, a resumed one from
 * what its pause kept), runs rounds — the model, then the tools it called, pausing where a person
 * must approve a call — and ends once, answered or paused; every ending is billed in the same
 * place (a paused turn is billed for what it used so far, the rest when it finishes).
 */

/** The agents a turn has been with (it hands to none of them again): the one running it, and each end of its handoffs. */
const visitedBy = (agent: Agent, handoffs: Handoff[]) => [agent.id, ...handoffs.flatMap((h) => [h.from, h.to].map((a) => agentAddress(a, 'handoffs').agentId))];

/** Tool rounds a turn may take before it must answer, for agents stored before the setting existed. */
export const MAX_TOOL_STEPS = 5;
const stepsOf = (agent: Agent) => agent.maxToolSteps ?? MAX_TOOL_STEPS;

export type { ConverseSource } from './grounding';

/**
 * A turn: either of a Cairn session (`sessionId` continues one, `userId` gives the agent its memory
 * of the user) or, with `history`, of a conversation the caller keeps (OpenAI-style: nothing is
 * stored; `instructions` add to the agent's own).
 */
export interface ConverseInput {
  message: string;
  sessionId?: string;
  userId?: string;
  /** The end user's groups (documents they may read, what tool policies see), and whether their identity was verified from a token. */
  userGroups?: string[];
  userVerified?: boolean;
  /** The user was named by a workflow step or an evaluation case, not verified or claimed by the caller (EndUser.named). */
  userNamed?: boolean;
  history?: ChatMessage[];
  instructions?: string;
  /** Sampling settings of this turn, over the agent's own (the OpenAI-compatible surface sends them). */
  settings?: { temperature?: number; maxTokens?: number; topP?: number; stop?: string[] };
  /** Resumes the session's paused turn with a person's decision on each pending call (no message then). */
  toolApprovals?: ToolApproval[];
  /**
   * The caller's own tools (OpenAI-style `tools`): a call to one ends the turn and goes back to
   * the caller, who runs it and sends the result as a later round (`toolRounds`).
   */
  clientTools?: ToolSpec[];
  toolRounds?: ToolRound[];
  toolChoice?: 'none' | 'required' | { name: string };
  /** The reply must be JSON of this format (checked, one repair asked for, else 502). */
  responseFormat?: ResponseFormat;
  /** The API key that asked, for usage accounting. */
  keyId?: string;
  /** The tenant's token budget before the turn, when its model is bound to one. */
  budget?: TokenBudget;
  /** A version or alias of the agent to run; without either, its draft. */
  target?: AgentTarget;
  /** Models tried when the agent's fails, in place of the agent's own fallbackModels (a workflow's agent step). */
  fallbackModels?: string[];
  /** With `history`: store this exchange under `sessionId` anyway (OpenAI's `store: true`), so its reply can be rated. */
  store?: boolean;
  /**
   * The stored exchange's message ids, chosen by the caller (OpenAI's Responses API names its reply
   * before the model answers). `continues`: the question is stored already and the caller's tool
   * results continue its exchange: the history stops before it, and only the new reply is written.
   */
  exchange?: Exchange;
  /** A turn asked by another agent's `agent` tool: the agents above it, and the asking turn's session (the new session's parent). */
  caller?: { chain: string[]; agentId: string; sessionId: string };
  /** The turn continues with a handoff target (`to`, an address), after the handoffs it made so far. */
  handoff?: { to: string; made: Handoff[] };
  /** This API's OAuth callback as the request reached it: where a provider sends an end user who connects an account back to. */
  callbackUrl?: string;
  /** Resumes the session's paused turn once the end user has connected the accounts it waited for (`requiredActions`). */
  resume?: boolean;
}

export interface Exchange {
  questionId: string;
  replyId: string;
  continues?: boolean;
}

export interface ToolApproval {
  id: string;
  approved: boolean;
  reason?: string;
}

// What a paused turn keeps, declared once: the store holds it as it was written, and it is parsed
// here when read back, so a resumed turn works on checked values.
const record = z.record(z.string(), z.unknown());
const usageShape = z.object({ inputTokens: z.number(), outputTokens: z.number(), cachedInputTokens: z.number().optional(), cacheWriteTokens: z.number().optional() });
const toolCallShape = z.object({ id: z.string(), name: z.string(), arguments: record.optional() }) satisfies z.ZodType<ToolCall>;
const requiredActionShape = z.object({ type: z.literal('authorization'), provider: z.string(), url: z.string() }) satisfies z.ZodType<RequiredAction>;
const toolCallRecordShape = z.object({
  id: z.string(),
  tool: z.string(),
  arguments: record.optional(),
  result: z.string().optional(),
  error: z.string().optional(),
  durationMs: z.number(),
  /** An agent tool's call: the child session the asked agent answered in. */
  child: z.object({ agentId: z.string(), sessionId: z.string() }).optional(),
});
const chatRequestShape = z.object({
  model: z.string(),
  messages: z.array(z.object({ role: z.enum(['user', 'assistant']), content: z.string() })),
  summary: z.string().optional(),
  now: z.number(),
  instructions: z.string().optional(),
  passages: z.array(z.object({ title: z.string(), text: z.string() })).optional(),
  temperature: z.number(),
  maxTokens: z.number(),
  topP: z.number().optional(),
  stop: z.array(z.string()).optional(),
  tools: z.array(z.object({ name: z.string(), description: z.string(), parameters: record })).optional(),
  toolRounds: z.array(z.object({ calls: z.array(toolCallShape), results: z.array(z.object({ id: z.string(), name: z.string(), content: z.string(), isError: z.boolean() })) })).optional(),
  toolChoice: z.union([z.literal('required'), z.object({ name: z.string() })]).optional(),
  responseFormat: z.union([z.object({ type: z.literal('json_object') }), z.object({ type: z.literal('json_schema'), name: z.string(), schema: record })]).optional(),
  memory: z.array(z.string()).optional(),
  agent: z.object({ name: z.string(), description: z.string(), unsearchedSources: z.number().optional() }).optional(),
}) satisfies z.ZodType<ChatRequest>;
const progressShape = z.object({
  toolCalls: z.array(toolCallRecordShape),
  usage: usageShape,
  step: z.number(),
  /** Searches the turn made (grounding, knowledge_search calls) and their read units: SearchWork. Turns paused before they were counted carry none. */
  searches: z.number().default(0),
  readUnits: z.number().default(0),
  /** Each model's tokens and calls, failed ones included (turns paused before they were counted by model carry none). */
  models: z.record(z.string(), modelTally).default({}),
  /** What usage accounting already counted (when the turn paused): a resumed turn counts the rest. */
  billed: z.object({ toolCalls: z.number(), searches: z.number().default(0), readUnits: z.number().default(0), guardrailFindings: z.number().default(0), models: z.record(z.string(), modelTally).default({}) }).optional(),
});
/** A turn between its steps: everything needed to continue it, from any instance. */
const turnStateShape = z.object({
  keyId: z.string().optional(),
  request: chatRequestShape,
  sources: z.array(converseSource),
  receivedAt: z.number(),
  userId: z.string().optional(),
  userGroups: z.array(z.string()).optional(),
  userVerified: z.boolean().optional(),
  userNamed: z.boolean().optional(),
  /** Where a provider sends an end user who connects an account back to (ConverseInput.callbackUrl). */
  callbackUrl: z.string().optional(),
  progress: progressShape,
  /** The definition the turn runs (turns paused before versions existed ran the draft). */
  agentVersion: agentVersionRef.default(DRAFT),
  /** The model that gave the last answer, when it was not the agent's own (a fallback). */
  answeredBy: z.string().optional(),
  /** The agent the session was handed to, running the turn (`agt_…[:release]`); absent: the session's own. */
  holder: z.string().optional(),
  /** The handoffs the turn has made. */
  handoffs: z.array(z.object({ from: z.string(), to: z.string() })).default([]),
  /**
   * A round some of whose calls wait for a person (an asked agent's approval, a remote task's
   * input): all its calls, the results of those that finished, and what each waiting one asks and
   * keeps to go on from.
   */
  waitingRound: z.object({ calls: z.array(toolCallShape), done: z.array(toolCallRecordShape), waits: z.record(z.string(), z.object({ asks: z.string(), state: record, actions: z.array(requiredActionShape).optional() })) }).optional(),
});
// Turns kept before requests carried their time were asked when they were received.
const withRequestTime = (raw: unknown) => {
  const kept = raw as { request?: { now?: number }; receivedAt?: number } | undefined;
  return kept?.request && kept.request.now === undefined ? { ...kept, request: { ...kept.request, now: kept.receivedAt } } : raw;
};
const pausedTurnShape = z.preprocess(
  withRequestTime,
  turnStateShape.extend({
    /** The calls a person decides on. */
    pendingCalls: z.array(toolCallShape).min(1),
  }),
);
const checkpointShape = z.preprocess(withRequestTime, turnStateShape);

/** A turn between two of its steps, as a background run keeps it (values tokenized under the agent's guardrails). */
export type TurnCheckpoint = z.infer<typeof checkpointShape>;

/** A tool call of a turn, as stored and answered: what was asked, what came back, how long it took. */
export type ToolCallRecord = z.infer<typeof toolCallRecordShape>;
/** How far a turn got: its tool calls, the tokens used and the model steps taken. */
type Progress = z.infer<typeof progressShape>;
/** A turn waiting for a person: everything needed to continue it, from any instance. */
type PausedTurn = z.infer<typeof pausedTurnShape>;

/** A checkpoint read back (from a run's record), checked; a 500 naming the run when it cannot be read. */
export function checkpointFrom(raw: unknown, runId: string): TurnCheckpoint {
  const parsed = checkpointShape.safeParse(raw);
  if (parsed.success) return parsed.data;
  log.error('run checkpoint unreadable', { runId, issues: parsed.error.issues.slice(0, 5) });
  throw new AppError('INTERNAL_ERROR', `The state of run ${runId} could not be read`);
}

/** What continues a turn after its last step: what a pause keeps, values tokenized under guardrails. */
export function checkpointOf(turn: Turn): TurnCheckpoint {
  const { keyId, request, sources, receivedAt, progress, agentVersion, guard, answeredBy, holder, handoffs, waitingRound, callbackUrl } = turn;
  const state: TurnCheckpoint = { ...(keyId ? { keyId } : {}), request, sources, receivedAt, ...endUserFields(turn), ...(callbackUrl ? { callbackUrl } : {}), progress, agentVersion, ...(answeredBy ? { answeredBy } : {}), ...(holder ? { holder } : {}), handoffs, ...(waitingRound ? { waitingRound: guard ? { ...waitingRound, done: guard.storedJson(waitingRound.done) } : waitingRound } : {}) };
  return guard ? { ...state, request: { ...request, messages: guard.storedJson(request.messages), ...(request.summary ? { summary: guard.storedJson(request.summary) } : {}), ...(request.memory ? { memory: guard.storedJson(request.memory) } : {}), ...(request.toolRounds ? { toolRounds: guard.storedJson(request.toolRounds) } : {}) }, progress: { ...progress, toolCalls: guard.storedJson(progress.toolCalls) } } : state;
}

/** What a streamed turn yields: the reply's text as it comes, and its tool calls as they happen. */
export type TurnEvent = { type: 'delta'; text: string } | { type: 'tool_call'; call: Omit<ToolCallRecord, 'result' | 'error' | 'durationMs'> } | { type: 'tool_result'; call: ToolCallRecord };

/** A turn as it runs: the part a pause keeps, and what is looked up again from the agent. */
export interface Turn extends Omit<PausedTurn, 'pendingCalls'> {
  agent: Agent;
  /** What the model may call this turn (the agent's tools, expanded: one per operation or MCP tool). */
  tools: CallableTool[];
  /** Names of the caller's own tools: calls to them go back to the caller. */
  clientTools: Set<string>;
  sessionId: string;
  resolved: ResolvedModel;
  /** The model that gave the last answer (a fallback, when the agent's own failed). */
  answeredBy?: string;
  /** The tenant's token budget before the turn, when its model is bound to one. */
  budget?: TokenBudget;
  /** Whether turns are stored (Cairn sessions) or the caller keeps the history (OpenAI-style). */
  persist: boolean;
  /** The agent's guardrails for this turn (its model is behind them), when it has any. */
  guard?: Guard;
  /** The caller keeps the history but asked for this exchange to be stored too (OpenAI `store: true`), so it can be rated. */
  store: boolean;
  /**
   * The session begins with this turn and its id has not been given out yet: nothing else can
   * have written to it, so its index entry (and an anonymous session's memory) is put, not updated.
   */
  fresh: boolean;
  skipped: Grounding['skipped'];
  exchange?: Exchange;
  /** The agents whose turns led to this one, this turn's agent last (a turn a person started: it alone). */
  chain: string[];
  /** A child session's first turn: the asking agent's session, linked from its index entry. */
  parent?: { agentId: string; sessionId: string };
  /** The agent whose session this is (where it is stored): the turn's agent, unless the session was handed to it. */
  owner: string;
  /** The transfer tools the model was given, by name: the address each hands to. */
  transfers: Map<string, string>;
  /** A resumed round's calls that wait for a person again: the turn pauses again at once. */
  waitingAgain?: ToolCall[];
}

/** The session's paused turn, checked; undefined when there is none. */
function pausedTurnOf(raw: unknown, sessionId: string): PausedTurn | undefined {
  if (raw === undefined) return undefined;
  const parsed = pausedTurnShape.safeParse(raw);
  if (parsed.success) return parsed.data;
  log.error('paused turn unreadable', { sessionId, issues: parsed.error.issues.slice(0, 5) });
  throw new AppError('INTERNAL_ERROR', `The paused turn of session ${sessionId} could not be read`);
}

/** What a turn runs, on every span its model and tool calls start. */
const turnLabels = (agentId: string, version: AgentVersionRef) => ({ 'cairn.agent.id': agentId, 'cairn.agent.version': String(version) });

/** The turn's model, its every call (whole, or each step of a stream) made under the turn's span labels. */
function labelledModel(resolved: ResolvedModel, labels: Record<string, string>): ResolvedModel {
  const { engine } = resolved;
  return {
    ...resolved,
    engine: {
      provider: engine.provider,
      supportsTools: engine.supportsTools,
      generate: (request, signal) => withSpanLabels(labels, () => engine.generate(request, signal)),
      async *stream(request, signal) {
        const steps = engine.stream(request, signal);
        try {
          for (;;) {
            const step = await withSpanLabels(labels, () => steps.next());
            if (step.done) return step.value;
            yield step.value;
          }
        } finally {
          // A consumer that stops early stops the model's stream too.
          await steps.return(undefined as never);
        }
      },
    },
  };
}

/** The turn's model: each call counted by model in its progress, behind its guardrails, under its span labels. */
const turnModel = (resolved: ResolvedModel, progress: Progress, guard: Guard | undefined, labels: Record<string, string>) => {
  const counted = tallied(resolved, () => progress.models);
  return labelledModel(guard ? guardedModel(counted, guard) : counted, labels);
};

/** The end user a turn acts for, as its input and its kept state carry it (nothing without one). */
type EndUserFields = Pick<ConverseInput, 'userId' | 'userGroups' | 'userVerified' | 'userNamed'>;
const endUserFields = (from: EndUserFields) => turnUser(userOfTurn(from));

/**
 * A new turn's input with the end user the tenant admits: whoever started it (a request's edge, a
 * workflow step, an evaluation case), a claimed user is dropped where the tenant now requires
 * verified ones, and the turn runs for nobody (logged, since nothing else may say so).
 */
async function withAdmittedUser(rt: Runtime, scope: TenantScope, input: ConverseInput): Promise<ConverseInput> {
  const { user, refused } = await admittedUser(rt, scope, userOfTurn(input));
  if (!refused) return input;
  log.warn('turn runs for nobody', { tenantId: scope.tenantId, reason: refused });
  const { userId: _id, userGroups: _groups, userVerified: _verified, userNamed: _named, ...rest } = input;
  return { ...rest, ...turnUser(user) };
}

const toolOf = (tools: CallableTool[], name: string) => tools.find((t) => t.name === name);

/** What the tool's policy says of a call, judged on its arguments, the end user, the tenant and the agent's version. */
async function decisionOf(scope: TenantScope, turn: Pick<Turn, 'agent' | 'agentVersion' | 'tools'> & EndUserFields, call: ToolCall): Promise<CallDecision> {
  const tool = toolOf(turn.tools, call.name);
  if (!tool) return { action: 'allow' };
  return decideCall(tool.policy, tool.requireApproval, {
    arguments: call.arguments ?? {},
    // Always there, id null without an end user: `user.id != 'U'` then holds, as it should.
    user: userView(userOfTurn(turn)),
    tenant: { id: scope.tenantId },
    agent: { id: turn.agent.id, version: turn.agentVersion },
    tool: call.name,
  });
}
/** Each call's judgement, by call id. */
export async function decisionsOf(scope: TenantScope, turn: Pick<Turn, 'agent' | 'agentVersion' | 'tools'> & EndUserFields, calls: ToolCall[]): Promise<Map<string, CallDecision>> {
  return new Map(await Promise.all(calls.map(async (c) => [c.id, await decisionOf(scope, turn, c)] as const)));
}
const pending = (calls: ToolCall[], waits: Record<string, { asks: string }> = {}) => calls.map((c) => ({ id: c.id, tool: c.name, arguments: c.arguments, ...(waits[c.id] ? { asks: waits[c.id]!.asks } : {}) }));
/** What the person must do before a paused turn or run goes on (connect accounts), from what its calls wait for; one per provider. */
export const requiredActionsOf = (waits: Record<string, { actions?: RequiredAction[] }> = {}): RequiredAction[] => [...new Map(Object.values(waits).flatMap((w) => w.actions ?? []).map((a) => [a.provider, a])).values()];

/**
 * A new turn: the definition it runs (the draft, a version, or an alias's choice for the session),
 * its history, grounding, memory and tools, gathered once.
 */
async function newTurn(rt: Runtime, scope: TenantScope, agentId: string, input: ConverseInput, progress: Progress): Promise<Turn> {
  const sessionId = input.sessionId ?? newId('session', rt.clock.now());
  // A new session has no history to read; a continued one says which version its last turn ran.
  const read: SessionHistory = input.history === undefined && input.sessionId ? await sessionHistory(rt, scope, agentId, sessionId) : { messages: [] };
  // A continued exchange's question is this turn's message: the history is what came before it.
  const continued = input.exchange?.continues ? input.exchange.questionId : undefined;
  const stored = continued ? { ...read, messages: read.messages.filter((m) => m.id < continued) } : read;
  // The session's own agent answers, unless the session was handed to another (which holds it until it hands back).
  const holding = input.handoff ? input.handoff.to : holderOf(stored.messages);
  const held = holding ? agentAddress(holding, 'handoffs') : undefined;
  // A session held by an agent (or release) deleted since goes back to its own agent; a handoff to one is the turn's error.
  const handedTo = held && held.agentId !== agentId ? await agentForTurn(rt, scope, held.agentId, held.target, { id: sessionId }).catch((error: unknown) => {
    if (error instanceof NotFoundError && !input.handoff) return undefined;
    throw error;
  }) : undefined;
  const holder = handedTo ? holding : undefined;
  const before = holder ? undefined : [...stored.messages].reverse().find((m) => m.role === 'assistant' && !m.agentId)?.agentVersion;
  const { agent, agentVersion } = handedTo ?? (await agentForTurn(rt, scope, agentId, (held?.agentId === agentId ? held.target : undefined) ?? input.target ?? {}, { id: sessionId, before }));
  const handoffs = input.handoff?.made ?? [];
  const asked = input.history ?? stored.messages.map((m) => ({ role: m.role, content: m.content }));
  const tools = agent.tools ?? [];
  // A paused turn must be resumed (or the session deleted) before the conversation goes on.
  if (input.sessionId && input.history === undefined && tools.some((t) => t.requireApproval || t.policy?.some((r) => r.action === 'require_approval') || ('auth' in t && t.auth?.type === 'oauth2'))) {
    const paused = pausedTurnOf(await rt.store.pausedTurns.peek(scope, agentId, input.sessionId), input.sessionId);
    const actions = requiredActionsOf(paused?.waitingRound?.waits);
    if (paused && actions.length > 0) throw new ConflictError('A turn of this session is waiting for the end user to connect an account: resume it with resume: true once they have', { pendingToolCalls: pending(paused.pendingCalls), requiredActions: actions });
    if (paused) throw new ConflictError('A turn of this session is waiting for tool approval: resume it with toolApprovals first', { pendingToolCalls: pending(paused.pendingCalls) });
  }
  // With a knowledge_search tool the model decides when to search; without, every turn is grounded.
  const [grounded, resolved, memory, callables, guard, transfers] = await Promise.all([
    agent.capabilities.includes('document-search') && agent.knowledgeSourceIds.length > 0 && !tools.some((t) => t.type === 'knowledge_search')
      ? ground(rt, scope, agent, input.message, asked, userOfTurn(input))
      : undefined,
    resolveForTenant(rt, scope, agent.model, input.fallbackModels ?? agent.fallbackModels, input.keyId),
    input.userId && input.history === undefined && agent.memory.mode !== 'off' ? rememberedFacts(rt, scope, agentId, input.userId) : Promise.resolve(undefined),
    // Listing an MCP server's tools is a network call: only when the model may call tools this turn.
    tools.length > 0 && input.toolChoice !== 'none' ? callableTools(toolContext(rt, scope, agent, { user: userOfTurn(input) })) : [],
    guardOf(rt, scope, agent, { owner: agentId, sessionId }, input.sessionId !== undefined && input.history === undefined),
    input.toolChoice !== 'none' && agent.handoffs.length > 0 ? transferTools(rt, scope, agent, visitedBy(agent, handoffs)) : [],
  ]);
  const forced = input.toolChoice;
  if (forced && forced !== 'none' && forced !== 'required' && !callables.some((t) => t.name === forced.name) && !(input.clientTools ?? []).some((t) => t.name === forced.name)) {
    throw new ValidationError('toolChoice.name', `is ${forced.name}, which is not one of the agent's tools${input.clientTools?.length ? ' or the request’s' : ''}`);
  }
  if (forced && forced !== 'none' && callables.length + (input.clientTools?.length ?? 0) === 0) throw new ValidationError('toolChoice', 'asks for a tool call, and the agent has no tools');
  for (const [i, clientTool] of (input.clientTools ?? []).entries()) {
    if (callables.some((t) => t.name === clientTool.name)) throw new ValidationError(`tools[${i}].function.name`, `is ${clientTool.name}, a tool the agent has itself`);
  }
  if (tools.length + transfers.length + (input.clientTools?.length ?? 0) > 0 && !resolved.engine.supportsTools) {
    throw new AppError('UNPROCESSABLE', `Agent ${agent.id} has tools, and its model ${resolved.name} cannot call tools: choose a model that can, or remove the tools`, { field: 'tools', model: resolved.name });
  }
  const labels = turnLabels(agent.id, agentVersion);
  // Stored turns hold what the guardrails let through (values tokenized): their summary needs no guard, and must not trip the turn's.
  const summarizer = labelledModel(tallied(resolved, () => progress.models), labels);
  const kept = input.history === undefined ? await compactedHistory(rt, scope, { agentId, sessionId }, stored, summarizer, modelSignal(undefined)) : stored;
  const history = input.history ?? kept.messages.map((m) => ({ role: m.role, content: m.content }));
  return {
    agent,
    agentVersion,
    tools: callables,
    sessionId,
    resolved: turnModel(resolved, progress, guard, labels),
    ...(guard ? { guard } : {}),
    clientTools: new Set((input.clientTools ?? []).map((t) => t.name)),
    sources: grounded?.sources ?? [],
    skipped: grounded?.skipped ?? [],
    persist: input.history === undefined,
    store: input.store === true,
    fresh: input.sessionId === undefined,
    ...(input.exchange ? { exchange: input.exchange } : {}),
    chain: [...(input.caller?.chain ?? []), agent.id],
    owner: agentId,
    ...(holder ? { holder } : {}),
    handoffs,
    transfers: new Map(transfers.map((t) => [t.name, t.to])),
    ...(input.caller && input.sessionId === undefined ? { parent: { agentId: input.caller.agentId, sessionId: input.caller.sessionId } } : {}),
    receivedAt: rt.clock.now(),
    ...endUserFields(input),
    ...(input.callbackUrl ? { callbackUrl: input.callbackUrl } : {}),
    keyId: input.keyId,
    budget: resolved.budget,
    progress,
    request: {
      model: resolved.model,
      messages: [...history, { role: 'user', content: input.message }],
      now: rt.clock.now(),
      instructions: [agent.instructions, input.instructions].filter(Boolean).join('\n\n') || undefined,
      ...(kept.compaction ? { summary: kept.compaction.summary } : {}),
      passages: grounded?.passages,
      ...(memory && memory.length > 0 ? { memory } : {}),
      temperature: input.settings?.temperature ?? agent.temperature,
      maxTokens: input.settings?.maxTokens ?? agent.maxTokens,
      ...(input.settings?.topP !== undefined ? { topP: input.settings.topP } : {}),
      ...(input.settings?.stop?.length ? { stop: input.settings.stop } : {}),
      ...(input.toolChoice !== 'none' && callables.length + transfers.length + (input.clientTools?.length ?? 0) > 0
        ? { tools: [...specsOf(callables, transfers), ...(input.clientTools ?? [])] }
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

/**
 * The session's paused turn, taken back with a decision on every pending call (exactly once: a
 * second resume finds nothing and is a 409); its pending calls and the decisions come with it.
 */
async function resumedTurn(rt: Runtime, scope: TenantScope, agentId: string, input: ConverseInput & { sessionId: string; toolApprovals: ToolApproval[] }) {
  const nothingWaits = () => new ConflictError(`No turn of session ${input.sessionId} is waiting for tool approval (already resumed, or never paused)`);
  const waiting = pausedTurnOf(await rt.store.pausedTurns.peek(scope, agentId, input.sessionId), input.sessionId);
  if (!waiting) throw nothingWaits();
  // The turn goes on with the definition it started with (the agent the session was handed to, if it was).
  const { agent } = await agentForTurn(rt, scope, waiting.holder ? agentAddress(waiting.holder, 'handoffs').agentId : agentId, waiting.agentVersion === DRAFT ? {} : { version: waiting.agentVersion }, { id: input.sessionId });
  input.toolApprovals.forEach((a, i) => {
    if (!waiting.pendingCalls.some((c) => c.id === a.id)) throw new ValidationError(`toolApprovals[${i}].id`, `is not a pending call of this turn (${waiting.pendingCalls.map((c) => c.id).join(', ')})`);
  });
  const approvals = new Map(input.toolApprovals.map((a) => [a.id, a]));
  // `resume`: the accounts the turn waited for are connected — each call that waited for one goes on (and waits again if still not).
  if (input.resume) for (const c of waiting.pendingCalls) if (waiting.waitingRound?.waits[c.id]?.actions?.length && !approvals.has(c.id)) approvals.set(c.id, { id: c.id, approved: true });
  const [tools, guard] = await Promise.all([callableTools(toolContext(rt, scope, agent, { user: userOfTurn(waiting) })), guardOf(rt, scope, agent, { owner: agentId, sessionId: input.sessionId }, true)]);
  // Calls kept with tokens are judged on, and act on, the values again (the model's round keeps its own tokens).
  const restored = (calls: ToolCall[]) => (guard ? calls.map((c) => ({ ...c, ...(c.arguments ? { arguments: guard.restoreArgs(c.arguments) } : {}) })) : calls);
  const asking = { agent, agentVersion: waiting.agentVersion, tools, ...endUserFields(waiting) };
  const decided = await decisionsOf(scope, asking, restored(waiting.pendingCalls));
  const undecided = waiting.pendingCalls.filter((c) => !approvals.has(c.id) && (decided.get(c.id)?.action === 'require_approval' || waiting.waitingRound?.waits[c.id] !== undefined));
  if (undecided.length > 0) throw new ValidationError('toolApprovals', `must decide on every pending call: ${undecided.map((c) => c.id).join(', ')} missing${input.resume ? ' (resume: true goes on only with calls that waited for an account to be connected)' : ''}`);
  const taken = pausedTurnOf(await rt.store.pausedTurns.take(scope, agentId, input.sessionId), input.sessionId);
  if (!taken) throw nothingWaits();
  const { pendingCalls, ...kept } = taken;
  // Counted against the key that resumes it (the one that started it, when resumed without one).
  const turn = await continuedTurn(rt, scope, { agent, tools, guard, owner: agentId }, { ...kept, ...(input.keyId ? { keyId: input.keyId } : {}) }, input.sessionId);
  return { turn, pendingCalls: restored(pendingCalls), approvals, decided };
}

/** What the model is told of the agent's tools and its transfers (handoffs). */
const specsOf = (tools: CallableTool[], transfers: Array<ToolSpec & { to: string }>): ToolSpec[] => [
  ...tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
  ...transfers.map(({ to: _to, ...spec }) => spec),
];

/** A request with these tools, or none when there are none left (a server that no longer lists any). */
function withTools(request: ChatRequest, tools: ToolSpec[]): ChatRequest {
  const { tools: _old, toolChoice, ...rest } = request;
  return tools.length > 0 ? { ...rest, tools, ...(toolChoice ? { toolChoice } : {}) } : rest;
}

/**
 * A turn continued from what it kept (a paused turn, or a background run's checkpoint), on its
 * definition, tools and guard as looked up again now; its model resolved again (budgets as they
 * stand now).
 */
async function continuedTurn(
  rt: Runtime,
  scope: TenantScope,
  parts: { agent: Agent; tools: CallableTool[]; guard: Guard | undefined; owner: string },
  kept: TurnCheckpoint,
  sessionId: string,
  options: { model: boolean } = { model: true },
): Promise<Turn> {
  const { agent, tools, guard, owner } = parts;
  // The continued turn's guard is new: its findings are counted from none.
  if (kept.progress.billed) kept.progress.billed.guardrailFindings = 0;
  const [resolved, transfers] = await Promise.all([
    options.model ? resolveForTenant(rt, scope, agent.model, agent.fallbackModels, kept.keyId) : (noModel(kept.answeredBy ?? agent.model) as ResolvedModel & { budget?: TokenBudget }),
    // The transfer tools the model was given (it is asked again with the same tools).
    options.model && kept.request.tools && agent.handoffs.length > 0 ? transferTools(rt, scope, agent, visitedBy(agent, kept.handoffs)) : [],
  ]);
  return {
    ...kept,
    // The model is asked with the tools as they are now (an MCP server lists the end user's tools once they have connected).
    ...(options.model && kept.request.tools ? { request: withTools(kept.request, specsOf(tools, transfers)) } : {}),
    agent,
    tools,
    clientTools: new Set(),
    sessionId,
    resolved: turnModel(resolved, kept.progress, guard, turnLabels(agent.id, kept.agentVersion)),
    ...(guard ? { guard } : {}),
    budget: resolved.budget,
    persist: true,
    store: false,
    fresh: false,
    skipped: [],
    chain: [agent.id],
    owner,
    transfers: new Map(transfers.map((t) => [t.name, t.to])),
  };
}

/**
 * A background run's turn from its checkpoint: the run's definition, its tools and guard (the
 * session's vault) looked up again. A step that runs tools calls no model (`model: false`): its
 * model (and the budgets a model call is held to) is not looked up.
 */
export async function turnFromCheckpoint(rt: Runtime, scope: TenantScope, agentId: string, sessionId: string, checkpoint: TurnCheckpoint, options: { model: boolean } = { model: true }): Promise<Turn> {
  const running = checkpoint.holder ? agentAddress(checkpoint.holder, 'handoffs').agentId : agentId;
  const { agent } = await agentForTurn(rt, scope, running, checkpoint.agentVersion === DRAFT ? {} : { version: checkpoint.agentVersion }, { id: sessionId });
  const [tools, guard] = await Promise.all([callableTools(toolContext(rt, scope, agent, { user: userOfTurn(checkpoint) })), guardOf(rt, scope, agent, { owner: agentId, sessionId }, true)]);
  return continuedTurn(rt, scope, { agent, tools, guard, owner: agentId }, checkpoint, sessionId, options);
}

/** The model of a step that calls none: named (usage is counted under it), never called. */
const noModel = (name: string): ResolvedModel => {
  const refuse = () => {
    throw new AppError('INTERNAL_ERROR', 'A tool step called its model');
  };
  return { name, model: name.slice(name.indexOf('/') + 1), engine: { provider: 'none', supportsTools: true, generate: async () => refuse(), stream: async function* () { return refuse(); } } };
};

/** A new turn of a background run: nothing is resumed, nothing streamed yet. */
export function startTurn(rt: Runtime, scope: TenantScope, agentId: string, input: ConverseInput): Promise<Turn> {
  return openTurn(rt, scope, agentId, input, undefined, () => undefined);
}

/** The session's token vault, saved when the turn's guard added to it (a run's checkpoint keeps tokens only). */
export async function saveTurnVault(rt: Runtime, scope: TenantScope, turn: Turn): Promise<void> {
  if (turn.guard?.vaultChanged) await saveVault(rt, scope, turn.owner, turn.sessionId, turn.guard.vault());
}

/** A new turn, or the resumption of a paused one (its approved calls run first). */
async function openTurn(rt: Runtime, scope: TenantScope, agentId: string, input: ConverseInput, signal: AbortSignal | undefined, emit: (event: TurnEvent) => void): Promise<Turn> {
  if (!input.toolApprovals && !input.resume) {
    const progress: Progress = { toolCalls: [], usage: { inputTokens: 0, outputTokens: 0 }, step: 0, searches: 0, readUnits: 0, models: {} };
    const admitted = await withAdmittedUser(rt, scope, input);
    return meteringSearches(progress, async () => newTurn(rt, scope, agentId, admitted, progress));
  }
  if (!input.sessionId) throw new ValidationError('context.sessionId', `is required to resume a turn with ${input.resume ? 'resume' : 'toolApprovals'}`);
  const { turn, pendingCalls, approvals, decided } = await resumedTurn(rt, scope, agentId, { ...input, sessionId: input.sessionId, toolApprovals: input.toolApprovals ?? [] });
  // A child turn resumed by the agent that asked it keeps its place in the chain of agents.
  if (input.caller) turn.chain = [...input.caller.chain, turn.agent.id];
  const { waiting } = await runToolRound(rt, scope, turn, pendingCalls, signal, emit, decided, { approvals });
  if (waiting) turn.waitingAgain = waiting;
  return turn;
}

/**
 * Runs the tools a step asked for (in parallel), adds the round to the request and the calls (and
 * any searches they made) to the turn's progress, and reports each call; a failing or unknown tool
 * is an error the model is told about, and so is a call a person rejected.
 */
export async function runToolRound(
  rt: Runtime,
  scope: TenantScope,
  turn: Turn,
  calls: ToolCall[],
  signal: AbortSignal | undefined,
  emit: (event: TurnEvent) => void,
  decided: Map<string, CallDecision>,
  options: { approvals?: Map<string, ToolApproval>; idempotencyKeyOf?: (call: ToolCall) => string; runId?: string } = {},
): Promise<{ records: ToolCallRecord[]; waiting?: ToolCall[] }> {
  const { approvals, idempotencyKeyOf } = options;
  const user = userOfTurn(turn);
  // An end user connects an account at the URL a call waits with; coming back, the state names what waits (this session, its run).
  const { callbackUrl } = turn;
  const authorize = user
    ? async (provider: string, scopes?: string[]) =>
        (await startAuthorization(rt, scope, { provider, userId: user.id, ...(scopes ? { scopes } : {}), ...(callbackUrl ? { redirectUri: callbackUrl } : {}), waiter: { agentId: turn.owner, sessionId: turn.sessionId, ...(options.runId ? { runId: options.runId } : {}) } })).url
    : undefined;
  for (const call of calls) emit({ type: 'tool_call', call: { id: call.id, tool: call.name, arguments: call.arguments } });
  const pausable = turn.persist;
  const waits = turn.waitingRound?.waits ?? {};
  const outcomes = await meteringSearches(turn.progress, () =>
    withSpanLabels(turnLabels(turn.agent.id, turn.agentVersion), () => Promise.all(
      calls.map(async (call) => {
        const tool = toolOf(turn.tools, call.name);
        const started = performance.now();
        const approval = approvals?.get(call.id);
        const decision = decided.get(call.id) ?? { action: 'allow' };
        const waited = waits[call.id];
        const context = (resume?: ToolResume) =>
          toolContext(rt, scope, turn.agent, {
            signal,
            keyId: turn.keyId,
            user,
            pausable,
            ...(authorize ? { authorize } : {}),
            askAgent: (address, request, resuming) => askedAgent(rt, scope, turn, address, request, signal, { pausable, ...(resuming ? { resume: resuming } : {}) }),
            ...(resume ? { resume } : {}),
            ...(idempotencyKeyOf ? { idempotencyKey: idempotencyKeyOf(call) } : {}),
          });
        const outcome = !tool
          ? // A tool that stood for a server until the end user connected is gone once they have: the call did its work.
            waited && approval?.approved && typeof waited.state.provider === 'string'
            ? { ok: true as const, result: `The end user connected their ${waited.state.provider} account: its tools are available from the next step.` }
            : { ok: false as const, error: `There is no tool named ${call.name}` }
          : waited
            ? // A call that waited for a person goes on with the decision (a rejection too: what it waits on hears of it).
              approval && !approval.approved && typeof waited.state.provider === 'string'
              ? { ok: false as const, error: `The end user did not connect their ${waited.state.provider} account${approval.reason ? `: ${approval.reason}` : ''}` }
              : approval
              ? await runTool(tool, call.arguments, context({ state: waited.state, approval: { approved: approval.approved, ...(approval.reason ? { reason: approval.reason } : {}) } }), call.id)
              : { ok: false as const, error: 'This call waited for a person’s decision, which did not come' }
            : decision.action === 'deny'
              ? { ok: false as const, error: `This call was denied by the tool's policy${decision.reason ? `: ${decision.reason}` : ''}` }
              : decision.action === 'require_approval' && !approval
                ? { ok: false as const, error: 'This call needs a person’s approval, which could not be asked for here' }
                : approval && !approval.approved
                  ? { ok: false as const, error: `A person rejected this call${approval.reason ? `: ${approval.reason}` : ''}` }
                  : await runTool(tool, call.arguments, context(), call.id);
        return { call, outcome, durationMs: Math.round(performance.now() - started) };
      }),
    )),
  );
  const waiting = outcomes.filter(({ outcome }) => !outcome.ok && 'wait' in outcome && outcome.wait);
  const records = outcomes
    .filter((o) => !waiting.includes(o))
    .map(({ call, outcome, durationMs }): ToolCallRecord => {
      // An agent's reply cites its own sources [1]…: they join the turn's, renumbered after those it has.
      const result = outcome.ok && outcome.sources ? shiftedMarks(outcome.result, turn.sources.length, outcome.sources.length) : outcome.ok ? outcome.result : undefined;
      if (outcome.ok && outcome.sources) turn.sources.push(...(outcome.sources as ConverseSource[]));
      const record = { id: call.id, tool: call.name, arguments: call.arguments, ...(outcome.ok ? { result } : { error: outcome.error }), durationMs, ...(outcome.ok && outcome.child ? { child: outcome.child } : {}) };
      emit({ type: 'tool_result', call: record });
      return record;
    });
  turn.progress.toolCalls.push(...records);
  const round = turn.waitingRound ?? { calls, done: [], waits: {} };
  const done = [...round.done, ...records];
  if (waiting.length > 0) {
    // The round waits: the model is asked again once every call of it has its result.
    turn.waitingRound = { calls: round.calls, done, waits: Object.fromEntries(waiting.map(({ call, outcome }) => [call.id, (outcome as { wait: ToolWait }).wait])) };
    return { records, waiting: waiting.map(({ call }) => call) };
  }
  delete turn.waitingRound;
  const byId = new Map(done.map((r) => [r.id, r]));
  turn.request.toolRounds = [
    ...(turn.request.toolRounds ?? []),
    { calls: round.calls, results: round.calls.map((c) => byId.get(c.id)!).map((r) => ({ id: r.id, name: r.tool, content: r.result ?? r.error ?? '', isError: r.error !== undefined })) },
  ];
  return { records };
}

/**
 * Another agent asked from this turn (an `agent` tool's call): it answers a turn of its own in a new
 * child session, linked to this turn's, for the same end user and API key. A chain that would loop
 * or pass MAX_AGENT_DEPTH below the first agent is refused as the tool's error (its release may
 * have changed since the agents were written); so is a turn that stops for a person's approval.
 */
async function askedAgent(rt: Runtime, scope: TenantScope, turn: Turn, address: string, request: { message: string; context?: string }, signal: AbortSignal | undefined, options: { pausable: boolean; resume?: ToolResume }): Promise<ToolReply> {
  const { agentId, target } = agentAddress(address, 'agent');
  const { resume } = options;
  if (!resume && turn.chain.includes(agentId)) throw new ToolFailure(`Asking ${agentId} would make a loop: ${[...turn.chain, agentId].join(' → ')}`, { retryable: false });
  if (!resume && turn.chain.length > MAX_AGENT_DEPTH) throw new ToolFailure(`Asking ${agentId} would make a chain of ${turn.chain.length} agents below ${turn.chain[0]}; at most ${MAX_AGENT_DEPTH} are allowed`, { retryable: false });
  const caller = { chain: turn.chain, agentId: turn.agent.id, sessionId: turn.sessionId };
  const passedOn = request.context ? `The agent ${turn.agent.name} asks you this; what it passes on from its conversation:\n${request.context}` : undefined;
  const who = { ...(turn.keyId ? { keyId: turn.keyId } : {}), ...endUserFields(turn) };
  // Going on after a person's decision: the asked agent's paused turn resumes with it, for each call it waited on.
  const { data } = resume
    ? await converse(rt, scope, agentId, { message: '', sessionId: String(resume.state.sessionId), caller, toolApprovals: (resume.state.pending as string[]).map((id) => ({ id, ...resume.approval })), ...who }, { signal })
    : await converse(rt, scope, agentId, { message: request.message, target, caller, ...(passedOn ? { instructions: passedOn } : {}), ...who }, { signal });
  // The session is the asked agent's, whoever answered in it (it may have handed over).
  const child = { agentId, sessionId: data.sessionId };
  if (data.status === 'requires_action') {
    const calls = data.pendingToolCalls ?? [];
    const actions = data.requiredActions ?? [];
    const asks = actions.length > 0
      ? `The agent ${agentId} waits for the end user to connect ${actions.map((a) => a.provider).join(', ')} (its session ${child.sessionId})`
      : `The agent ${agentId} waits for a person to approve ${calls.map((c) => `${c.tool} ${JSON.stringify(c.arguments ?? {})}`).join('; ')} (its session ${child.sessionId})`;
    // The calling turn waits with it when it can (the accounts to connect passed up); else the model is told.
    if (options.pausable) return { wait: { asks, state: { agentId, sessionId: child.sessionId, pending: calls.map((c) => c.id) }, ...(actions.length > 0 ? { actions } : {}) } };
    throw new ToolFailure(`${asks}; it has not answered`, { retryable: false });
  }
  return { text: data.reply, sources: data.sources, child };
}

/**
 * Counts what the turn used since it was last counted (a paused turn is counted when it pauses,
 * the rest when it finishes or fails), and marks it counted: each model's tokens and calls apart,
 * the turn's tool calls and searches with the model that answered.
 */
export async function billTurn(rt: Runtime, scope: TenantScope, turn: Turn): Promise<void> {
  const { progress } = turn;
  const billed = progress.billed ?? { toolCalls: 0, searches: 0, readUnits: 0, guardrailFindings: 0, models: {} };
  const findings = turn.guard?.findings ?? [];
  const byModel = talliesSince(progress.models, billed.models);
  const answeredBy = turn.answeredBy ?? turn.resolved.name;
  const turnCounts = {
    toolCalls: progress.toolCalls.length - billed.toolCalls,
    searches: progress.searches - billed.searches,
    readUnits: progress.readUnits - billed.readUnits,
    guardrailFindings: findings.length - billed.guardrailFindings,
  };
  const bucket = { keyId: turn.keyId, subject: { kind: 'agent' as const, id: turn.agent.id }, release: turn.agentVersion };
  const models = [...new Set([answeredBy, ...Object.keys(byModel)])];
  // Marked counted before the writes, so what the turn uses meanwhile (a model extracting its
  // memory while it is billed) is left for the next call to count.
  progress.billed = { toolCalls: progress.toolCalls.length, searches: progress.searches, readUnits: progress.readUnits, guardrailFindings: findings.length, models: structuredClone(progress.models) };
  // Each finding on the turn's span too: what kind, what was done, where (never the value).
  for (const f of findings.slice(billed.guardrailFindings)) {
    addSpanEvent('cairn.guardrail', { 'cairn.guardrail.type': f.type, 'cairn.guardrail.action': f.action, 'cairn.guardrail.where': f.where, 'cairn.guardrail.enforced': f.enforced, ...(f.entity ? { 'cairn.guardrail.entity': f.entity } : {}), ...(f.name ? { 'cairn.guardrail.name': f.name } : {}) });
  }
  await Promise.all(models.map((model) => recordUsage(rt, scope, { ...bucket, model, ...byModel[model], ...(model === answeredBy ? turnCounts : {}) })));
}

/** How a turn ends: answered (text, maybe a structured output or calls for the caller), or paused for a person. */
type Ending = { answer: ChatResult & { output?: unknown } } | { pause: ToolCall[] };

/**
 * Ends the turn: an answer is stored (for Cairn sessions) and remembered, a pause is kept until a
 * person decides; either is billed here, an answer even when storing it fails.
 */
async function endTurn(rt: Runtime, scope: TenantScope, turn: Turn, ending: Ending) {
  const { agent, sessionId, resolved, progress } = turn;
  const toolCalls = progress.toolCalls;
  const model = turn.answeredBy ?? resolved.name;
  if ('pause' in ending) {
    await billTurn(rt, scope, turn);
    const { agent: _a, tools: _t, clientTools: _c, sessionId: _s, resolved: _r, budget: _b, persist: _p, store: _s2, fresh: _f, guard, skipped: _k, owner, transfers: _tr, chain: _ch, parent: _pa, waitingAgain: _w, ...kept } = turn;
    // Under guardrails the waiting turn is kept as the session is: values tokenized (the vault saved) or masked.
    const paused: PausedTurn = guard ? guardedPause(guard, { ...kept, pendingCalls: ending.pause }) : { ...kept, pendingCalls: ending.pause };
    if (!(await rt.store.pausedTurns.pause(scope, owner, sessionId, paused))) throw new ConflictError('A turn of this session is already waiting for tool approval');
    if (guard?.vaultChanged) await saveVault(rt, scope, owner, sessionId, guard.vault());
    return {
      agentId: agent.id,
      agentVersion: turn.agentVersion,
      sessionId,
      status: 'requires_action' as const,
      reply: '',
      model,
      // Nothing is answered yet, so nothing is cited (the paused turn keeps its passages for the answer).
      sources: [] as ConverseSource[],
      usage: progress.usage,
      finishReason: 'requires_action',
      pendingToolCalls: pending(ending.pause, turn.waitingRound?.waits),
      ...(requiredActionsOf(turn.waitingRound?.waits).length > 0 ? { requiredActions: requiredActionsOf(turn.waitingRound?.waits) } : {}),
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
    };
  }
  const result = ending.answer;
  const { guard } = turn;
  // The reply lists the passages it cites, numbered as it cites them.
  const { reply, sources } = citedOnly(guard?.blocked ? guard.blockedMessage : result.text, turn.sources);
  // What the session and memory keep: personal values tokenized or masked as the guardrails say.
  const keep = (text: string) => (guard ? guard.forStorage(text) : text);
  // Ids are time-ordered: the reply's time is strictly after the question's, so they list in order.
  const asked = turn.receivedAt;
  const answered = Math.max(rt.clock.now(), asked + 1);
  const stored = turn.persist || turn.store;
  const { exchange } = turn;
  const messageId = stored ? (exchange?.replyId ?? newId('message', answered)) : undefined;
  // The reply's usage is the whole turn's (its rounds and any repair): progress takes it over. It
  // is billed while the turn is stored, one round trip fewer (a failure waits for the end).
  progress.usage = result.usage;
  const billing = billTurn(rt, scope, turn).then(() => undefined, (error: unknown) => ({ error }));
  const clientToolCalls = result.finishReason === 'tool_calls' && result.toolCalls?.length ? result.toolCalls : undefined;
  try {
    if (stored) {
      const question = keep(turn.request.messages[turn.request.messages.length - 1]!.content);
      const touch = { agentId: turn.owner, sessionId, userId: turn.userId, at: new Date(answered).toISOString(), messages: exchange?.continues ? 1 : 2, ...(turn.parent ? { parent: turn.parent } : {}) };
      // A refused turn is not remembered (remembering may ask the model, which a refusal never does); a continued exchange was, with its question.
      const memory = guard?.blocked || exchange?.continues
        ? undefined
        : await turnMemory(rt, scope, { agentId: turn.owner, sessionId, userId: turn.userId, text: question, reply: keep(reply), at: new Date(asked) }, agent, {
            newOwner: turn.fresh && !turn.userId,
            queued: { messageId: messageId!, ...(turn.keyId ? { keyId: turn.keyId } : {}), release: turn.agentVersion },
          });
      // One batch: the exchange, a new session's index entry and what memory puts.
      await rt.store.writeBatch([
        ...rt.store.sessions.messageWrites(scope, turn.owner, sessionId, [
          ...(exchange?.continues ? [] : [{ id: exchange?.questionId ?? newId('message', asked), role: 'user' as const, content: question, createdAt: new Date(asked).toISOString(), agentVersion: turn.agentVersion }]),
          {
            id: messageId!,
            role: 'assistant',
            content: keep(reply),
            createdAt: new Date(answered).toISOString(),
            sources,
            model,
            agentVersion: turn.agentVersion,
            ...(result.finishReason === 'interrupted' ? { interrupted: true } : {}),
            ...(toolCalls.length > 0 ? { toolCalls: guard ? guard.storedJson(toolCalls) : toolCalls } : {}),
            ...(clientToolCalls ? { clientToolCalls: guard ? guard.storedJson(clientToolCalls) : clientToolCalls } : {}),
            usage: result.usage,
            ...(result.finishReason === 'length' ? { finishReason: result.finishReason } : {}),
            // Answered by the agent the session was handed to: it holds the session's next turn.
            ...(turn.holder ? { agentId: turn.holder } : {}),
            ...(turn.handoffs.length > 0 ? { handoffs: turn.handoffs } : {}),
          },
        ]),
        ...(turn.fresh ? [rt.store.sessions.openingWrite(scope, touch)] : []),
        ...(memory?.puts ?? []),
      ]);
      if (guard?.vaultChanged) await saveVault(rt, scope, turn.owner, sessionId, guard.vault());
      // Independent writes: the index entry of a session that had turns before, and memory's updates (or its queued extraction).
      await Promise.all([turn.fresh ? undefined : rt.store.sessions.touchSession(scope, touch), memory?.finish()]);
    }
  } finally {
    const failed = await billing;
    if (failed) throw failed.error;
  }
  return {
    agentId: agent.id,
    agentVersion: turn.agentVersion,
    sessionId,
    // The stored reply's id: what feedback names (absent when nothing was stored).
    ...(messageId ? { messageId } : {}),
    reply,
    model,
    sources,
    usage: result.usage,
    finishReason: result.finishReason,
    status: guard?.blocked ? ('blocked' as const) : ('completed' as const),
    ...(guard && guard.findings.length > 0 ? { guardrails: guard.findings } : {}),
    ...(result.output !== undefined ? { output: result.output } : {}),
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
    ...(turn.handoffs.length > 0 ? { handoffs: turn.handoffs } : {}),
    // Calls of the caller's own tools, for the caller to run (OpenAI-style).
    ...(clientToolCalls ? { clientToolCalls } : {}),
  };
}

export type ConverseResult = Awaited<ReturnType<typeof endTurn>>;

/** The agent's guardrails for a turn, with the session's token vault when values are tokenized (and the session is Cairn's). */
async function guardOf(rt: Runtime, scope: TenantScope, agent: Agent, session: { owner: string; sessionId: string }, kept: boolean): Promise<Guard | undefined> {
  // The tenant's defaults, extended by the agent's own.
  const settings = effectiveGuardrails(await tenantGuardrails(rt, scope), agent.guardrails);
  if (!settings) return undefined;
  const vault = settings.pii?.action === 'tokenize' && kept ? await openVault(rt, scope, session.owner, session.sessionId) : {};
  return new Guard(settings, vault);
}

/** A paused turn as it is stored under guardrails: its conversation, tool rounds and pending calls with values tokenized or masked. */
function guardedPause(guard: Guard, paused: PausedTurn): PausedTurn {
  const { request } = paused;
  return {
    ...paused,
    request: {
      ...request,
      messages: guard.storedJson(request.messages),
      ...(request.memory ? { memory: guard.storedJson(request.memory) } : {}),
      ...(request.toolRounds ? { toolRounds: guard.storedJson(request.toolRounds) } : {}),
    },
    pendingCalls: guard.storedJson(paused.pendingCalls),
    progress: { ...paused.progress, toolCalls: guard.storedJson(paused.progress.toolCalls) },
    ...(paused.waitingRound ? { waitingRound: { ...paused.waitingRound, done: guard.storedJson(paused.waitingRound.done) } } : {}),
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

/** The model call ends as soon as the caller goes away (`signal`); each model of the chain has its own time limit. */
const modelSignal = (signal: AbortSignal | undefined): AbortSignal => signal ?? new AbortController().signal;

/** What a model step leads to: the turn ended, a round of the agent's own tools to run (each call judged once), or calls a person must decide on. */
export type StepOutcome = { ended: ConverseResult } | { round: ToolCall[]; decided: Map<string, CallDecision> } | { approval: ToolCall[] } | { handoff: string };

/**
 * What follows a model step: the turn ends (answered, or its calls handed to the caller), its tool
 * calls are to run, or they wait for a person. `streamed`: the text a streamed turn has sent so far;
 * `maxSteps`: the rounds it may take (the agent's, or a background run's own). Events (a checked
 * structured reply) go to `emit`.
 */
export async function stepOutcome(rt: Runtime, scope: TenantScope, turn: Turn, result: ChatResult, options: { streamed?: string; signal?: AbortSignal; emit?: (event: TurnEvent) => void; maxSteps?: number } = {}): Promise<StepOutcome> {
  const { progress } = turn;
  const maxSteps = options.maxSteps ?? stepsOf(turn.agent);
  const streamed = options.streamed ?? '';
  progress.usage = addUsage(progress.usage, result.usage);
  turn.answeredBy = result.model ?? turn.resolved.name;
  if (result.finishReason !== 'tool_calls' || !result.toolCalls?.length || progress.step >= maxSteps) {
    const limited = result.finishReason === 'tool_calls' ? stepLimitReply(result, maxSteps) : result;
    const final = await inFormat(turn.resolved, turn.request, { ...limited, usage: progress.usage }, modelSignal(options.signal));
    // A reply in a required format is checked whole before it is sent: it comes as one delta.
    if (turn.request.responseFormat) options.emit?.({ type: 'delta', text: final.text });
    return { ended: await endTurn(rt, scope, turn, { answer: { ...final, text: streamed || final.text } }) };
  }
  // A transfer moves the conversation: the target answers, whatever else was asked for with it.
  const transfer = result.toolCalls.find((c) => turn.transfers.has(c.name));
  if (transfer) return { handoff: turn.transfers.get(transfer.name)! };
  const forCaller = result.toolCalls.filter((c) => turn.clientTools.has(c.name));
  if (forCaller.length > 0) return { ended: await endTurn(rt, scope, turn, { answer: { ...result, text: streamed || result.text, toolCalls: forCaller, usage: progress.usage } }) };
  // Each call judged once: the judgement decides the pause and, after it, how the call runs.
  const decided = await decisionsOf(scope, turn, result.toolCalls);
  if (turn.persist && [...decided.values()].some((d) => d.action === 'require_approval')) return { approval: result.toolCalls };
  return { round: result.toolCalls, decided };
}

/** A converse turn's step: it ends (a pause for approval kept with the session), hands over (the target's turn goes on), or its round runs and the loop goes on. */
async function afterStep(rt: Runtime, scope: TenantScope, turn: Turn, input: ConverseInput, result: ChatResult, streamed: string, signal: AbortSignal | undefined, emit: (event: TurnEvent) => void): Promise<{ done: ConverseResult } | { next: Turn } | undefined> {
  const outcome = await stepOutcome(rt, scope, turn, result, { streamed, signal, emit });
  if ('ended' in outcome) return { done: outcome.ended };
  if ('approval' in outcome) return { done: await endTurn(rt, scope, turn, { pause: outcome.approval }) };
  if ('handoff' in outcome) return { next: await handOff(rt, scope, turn, outcome.handoff, input, signal, emit) };
  const { waiting } = await runToolRound(rt, scope, turn, outcome.round, signal, emit, outcome.decided);
  if (waiting) return { done: await endTurn(rt, scope, turn, { pause: waiting }) };
  turn.progress.step++;
  return undefined;
}

/**
 * The turn handed to `to`: what the agent handing over used is counted, and the target's turn is
 * opened on the same session, question and exchange (its own instructions, knowledge, tools,
 * guardrails and model), the handoff recorded. `base`: the request the turn answers (a background
 * run's is read back from its turn).
 */
export async function handOff(rt: Runtime, scope: TenantScope, turn: Turn, to: string, base: ConverseInput | undefined, signal?: AbortSignal, emit: (event: TurnEvent) => void = () => undefined): Promise<Turn> {
  await billTurn(rt, scope, turn);
  const messages = turn.request.messages;
  const input: ConverseInput = base ?? { message: messages[messages.length - 1]!.content, ...(turn.persist ? {} : { history: messages.slice(0, -1) }), ...endUserFields(turn), ...(turn.keyId ? { keyId: turn.keyId } : {}) };
  const { toolApprovals: _approvals, ...asked } = input;
  const next = await openTurn(rt, scope, turn.owner, { ...asked, sessionId: turn.sessionId, handoff: { to, made: [...turn.handoffs, { from: turn.holder ?? turn.agent.id, to }] }, ...(turn.exchange ? { exchange: turn.exchange } : {}) }, signal, emit);
  // The same exchange: a new session's index entry still to be put, its question asked when it was.
  Object.assign(next, { fresh: turn.fresh, receivedAt: turn.receivedAt, persist: turn.persist, store: turn.store, ...(turn.parent ? { parent: turn.parent } : {}) });
  next.request.now = turn.request.now;
  // The reply's usage is the whole turn's (each agent is billed its own).
  next.progress.usage = { ...turn.progress.usage };
  return next;
}

/** One turn, answered whole. `skipped`: the agent's sources that were not ready. */
export async function converse(rt: Runtime, scope: TenantScope, agentId: string, input: ConverseInput, options: { signal?: AbortSignal } = {}) {
  let turn = await openTurn(rt, scope, agentId, input, options.signal, () => undefined);
  try {
    if (turn.waitingAgain) {
      const paused = await endTurn(rt, scope, turn, { pause: turn.waitingAgain });
      return { data: paused, skipped: turn.skipped, budget: budgetAfter(turn.budget, paused.usage) };
    }
    for (;;) {
      const result = await turn.resolved.engine.generate(turn.request, modelSignal(options.signal));
      const step = await afterStep(rt, scope, turn, input, result, '', options.signal, () => undefined);
      if (step && 'next' in step) turn = step.next;
      else if (step) return { data: step.done, skipped: turn.skipped, budget: budgetAfter(turn.budget, step.done.usage) };
    }
  } catch (error) {
    await billFailed(rt, scope, turn);
    throw error;
  }
}

/** A turn that failed is counted for what it used, its failed model calls included (a failure to count is logged, not thrown over the turn's). */
export async function billFailed(rt: Runtime, scope: TenantScope, turn: Turn): Promise<void> {
  await billTurn(rt, scope, turn).catch((error: unknown) => log.error('failed turn not counted', { agentId: turn.agent.id, ...errorFields(error) }));
}

/**
 * One turn, streamed: what is known before the model answers, then `deltas()` yields the reply's
 * text as it comes and returns the finished turn (stored like a whole one). When the caller goes
 * away (`signal`), the model call is cancelled and the partial reply is stored marked interrupted.
 */
export async function converseStream(rt: Runtime, scope: TenantScope, agentId: string, input: ConverseInput, options: { signal?: AbortSignal } = {}) {
  // A resumed turn's approved calls run before the stream starts; their events lead it.
  const early: TurnEvent[] = [];
  let turn = await openTurn(rt, scope, agentId, input, options.signal, (event) => early.push(event));
  // The session's id goes out before the turn ends: a second turn of it may be under way by then.
  turn.fresh = false;
  return {
    agentId: turn.agent.id,
    agentVersion: turn.agentVersion,
    sessionId: turn.sessionId,
    model: turn.resolved.name,
    sources: turn.sources,
    skipped: turn.skipped,
    budget: turn.budget,
    async *deltas(): AsyncGenerator<TurnEvent, ConverseResult> {
      let text = '';
      for (const event of early) yield event;
      try {
        if (turn.waitingAgain) return await endTurn(rt, scope, turn, { pause: turn.waitingAgain });
        for (;;) {
          // A reply in a required format is checked whole before it is sent (afterStep sends it).
          const generator = turn.request.responseFormat ? whole(turn.resolved.engine.generate(turn.request, modelSignal(options.signal))) : turn.resolved.engine.stream(turn.request, modelSignal(options.signal));
          let step = await generator.next();
          for (; !step.done; step = await generator.next()) {
            text += step.value;
            yield { type: 'delta', text: step.value };
          }
          const events: TurnEvent[] = [];
          const after = await afterStep(rt, scope, turn, input, step.value, text, options.signal, (event) => events.push(event));
          for (const event of events) yield event;
          if (after && 'next' in after) {
            // The target answers from here; its stored reply is whole (what streamed before was the handing agent's).
            turn = after.next;
            turn.fresh = false;
            text = '';
          } else if (after) return after.done;
        }
      } catch (error) {
        if (!options.signal?.aborted) {
          await billFailed(rt, scope, turn);
          throw error;
        }
        const usage = { inputTokens: turn.progress.usage.inputTokens, outputTokens: turn.progress.usage.outputTokens + approximateTokens(text) };
        await endTurn(rt, scope, turn, { answer: { text, usage, finishReason: 'interrupted' } });
        throw error;
      }
    },
  };
}

/** A turn as workflow `agent` steps take it (given to the runtimes that run steps). */
export const agentTurn: AgentTurn = async (rt, scope, address, input, signal) => {
  // A step may name a release of the agent: `agt_…:live`.
  const { agentId, target } = agentAddress(address, 'agentId');
  return (await converse(rt, scope, agentId, { ...input, target }, { signal })).data;
};
