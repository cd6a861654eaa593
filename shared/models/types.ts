import type { EmbeddingModel, Reranker } from './embeddings';
/** What every model provider is given and returns; providers translate to their wire formats. */
export interface ChatMessage {
  role: 'user' | 'assistant';
  content: string;
}

/** A retrieved passage the answer may use; cited as [n], n = position + 1. */
export interface Passage {
  title: string;
  text: string;
}

/** A reply that must be JSON: any object, or a value matching a JSON Schema. */
export type ResponseFormat = { type: 'json_object' } | { type: 'json_schema'; name: string; schema: Record<string, unknown> };

/** How every provider is told of a response format (those with a native JSON mode get it too). */
export function formatInstruction(format: ResponseFormat): string {
  return format.type === 'json_schema'
    ? `Reply with only a JSON value (no prose, no code fence) that matches this JSON Schema:\n${JSON.stringify(format.schema)}`
    : 'Reply with only a JSON object (no prose, no code fence).';
}

/** A tool the model may call: its arguments as a JSON Schema object. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ToolCall {
  /** The provider's id of the call (made up by engines that give none). */
  id: string;
  name: string;
  /** Parsed arguments; undefined when the model sent arguments that are not a JSON object. */
  arguments?: Record<string, unknown>;
}

/** One round of this turn's tool use: the calls the model made and what they returned. */
export interface ToolRound {
  calls: ToolCall[];
  results: Array<{ id: string; name: string; content: string; isError: boolean }>;
}

export interface ChatRequest {
  /** The provider's own model name (after `provider/`). */
  model: string;
  /** The conversation, oldest first, ending with the user's message. */
  messages: ChatMessage[];
  /** The conversation before `messages`, summarized (a long session compacted, or a request fitted to its model's window). */
  summary?: string;
  /** When it is asked (epoch ms, the runtime's clock): the day "tomorrow" means to the built-in engine. */
  now: number;
  instructions?: string;
  passages?: Passage[];
  temperature: number;
  maxTokens: number;
  /** Nucleus sampling, 0–1 (providers' default when absent). */
  topP?: number;
  /** The reply ends before the first of these (at most 4). */
  stop?: string[];
  /** Tools the model may call (engines with `supportsTools` only). */
  tools?: ToolSpec[];
  /** This turn's tool use so far, after the last user message. */
  toolRounds?: ToolRound[];
  /** `required`: call some tool; `{name}`: call that one (default: the model decides). */
  toolChoice?: 'required' | { name: string };
  /** The reply must be JSON of this format. */
  responseFormat?: ResponseFormat;
  /** Current facts the agent remembers about the user from earlier conversations ("user prefers …"). */
  memory?: string[];
  /** Bedrock only: a guardrail the Converse API applies (`guardrailConfig`). */
  bedrockGuardrail?: { identifier: string; version: string };
  /** Who is answering (the local engine introduces itself). */
  agent?: {
    name: string;
    description: string;
    /** Knowledge sources the agent lists but does not search (it lacks the document-search capability). */
    unsearchedSources?: number;
  };
}

/**
 * Tokens of a call. `inputTokens` counts the whole prompt; of it, `cachedInputTokens` were read
 * from the provider's prompt cache and `cacheWriteTokens` written to it (each priced apart).
 */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens?: number;
  cacheWriteTokens?: number;
}

/** A model of a chain that did not answer: it failed (its error) or was skipped (its circuit was open, or it cannot call the request's tools). */
export interface FailedAttempt {
  model: string;
  error: { code: string; message: string; status?: number | string };
  skipped?: 'circuit_open' | 'no_tools';
}

export interface ChatResult {
  text: string;
  usage: TokenUsage;
  /** `provider/model` of the model that answered, when a chain chose among several. */
  model?: string;
  /** The models a chain tried before the one that answered. */
  failedAttempts?: FailedAttempt[];
  /** `interrupted`: the caller went away mid-reply and the model call was cancelled. */
  finishReason: 'stop' | 'length' | 'content_filter' | 'error' | 'other' | 'interrupted' | 'tool_calls';
  /** With finishReason `tool_calls`: the calls to run before the model continues. */
  toolCalls?: ToolCall[];
}

export interface ChatModel {
  readonly provider: string;
  /** Whether it takes `tools` and `toolRounds` (native tool calling). */
  readonly supportsTools: boolean;
  generate(request: ChatRequest, signal: AbortSignal): Promise<ChatResult>;
  /** Text deltas as they come; the generator's return value is the final result. */
  stream(request: ChatRequest, signal: AbortSignal): AsyncGenerator<string, ChatResult>;
}

/**
 * The system prompt real providers get, in two parts: what stays the same turn after turn (the
 * agent's instructions, the reply's format) and what changes with the question (memory, the
 * passages to ground on). Providers with prompt caching mark the end of each as cacheable, so the
 * stable part is read from cache on every turn and the context whenever it repeats (a follow-up
 * that retrieves the same passages).
 */
export function systemParts(request: ChatRequest): { stable?: string; context?: string } {
  const stable: string[] = [];
  if (request.instructions) stable.push(request.instructions);
  if (request.responseFormat) stable.push(formatInstruction(request.responseFormat));
  // The summary changes only when a session is compacted again: it belongs with what stays.
  if (request.summary) stable.push(`Earlier in this conversation (summarized):\n${request.summary}`);
  const context: string[] = [];
  if (request.memory && request.memory.length > 0) {
    context.push(`What you remember about the user from earlier conversations (use it when relevant):\n${request.memory.map((f) => `- ${f}`).join('\n')}`);
  }
  if (request.passages && request.passages.length > 0) {
    context.push(
      'Answer from the numbered passages below. Cite them as [n]. If they do not contain the answer, say so; do not invent facts.',
      request.passages.map((p, i) => `[${i + 1}] ${p.title ? `${p.title}: ` : ''}${p.text}`).join('\n\n'),
    );
  }
  return { ...(stable.length > 0 ? { stable: stable.join('\n\n') } : {}), ...(context.length > 0 ? { context: context.join('\n\n') } : {}) };
}

/** The system prompt as one text, for providers that take one. */
export function systemPrompt(request: ChatRequest): string | undefined {
  const { stable, context } = systemParts(request);
  return [stable, context].filter(Boolean).join('\n\n') || undefined;
}

/** Tokens of two model calls together. */
export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  const sum: TokenUsage = { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens };
  if (a.cachedInputTokens !== undefined || b.cachedInputTokens !== undefined) sum.cachedInputTokens = (a.cachedInputTokens ?? 0) + (b.cachedInputTokens ?? 0);
  if (a.cacheWriteTokens !== undefined || b.cacheWriteTokens !== undefined) sum.cacheWriteTokens = (a.cacheWriteTokens ?? 0) + (b.cacheWriteTokens ?? 0);
  return sum;
}

/** A rough token count (4 characters a token) for engines that do not report one. */
export const approximateTokens = (text: string) => Math.ceil(text.length / 4);

export interface ResolvedModel {
  /** `provider/model`, as responses report it. */
  name: string;
  model: string;
  engine: ChatModel;
  /** How long one call may take (the provider's `timeoutMs`, else MODEL_TIMEOUT_MS) before a chain tries the next model. */
  timeoutMs?: number;
  /** The model's context window in tokens, as its provider entry sets it (else a known default: context-window.ts). */
  contextWindow?: number;
}

/** A provider as the platform admin's listing shows it (never its key). */
export interface ProviderView {
  name: string;
  type: 'local' | 'openai-compatible' | 'anthropic' | 'bedrock';
  /** Whether its models can be called here (a provider without its credentials resolves to the built-in engine). */
  usable: boolean;
  baseUrl?: string;
  region?: string;
  hasApiKey?: boolean;
  timeoutMs?: number;
  promptCaching?: boolean;
  /** Models it lists (its `models`, and those MODEL_PRICES prices). */
  models: string[];
}

/** Resolves model names to engines; one per runtime, holding its provider clients and keys. */
export interface ModelResolver {
  resolve(name: string): Promise<ResolvedModel>;
  /** An embedding model (`provider/model`); a 400 naming the provider when it has no credentials here. Absent: no retrieval models in this function. */
  embedding?(name: string, dimensions?: number): Promise<EmbeddingModel>;
  reranker?(name: string): Promise<Reranker>;
  /** The providers configured here. */
  providers?(): Promise<ProviderView[]>;
}

/** A function that calls no model: resolving one says so (its Lambda was not given providers). */
const noProviders = async (name: string): Promise<never> => {
  throw new Error(`No model providers in this function (asked for ${name})`);
};
export const noModels: ModelResolver = { resolve: noProviders };
