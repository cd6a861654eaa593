import type { BedrockRuntimeClient, Message, ToolUseBlock } from '@aws-sdk/client-bedrock-runtime';
import { bedrockSdk } from './bedrock-sdk';
import { providerError, retryAfterOf } from './provider-error';
import { argumentsOf, parseArguments } from './tool-arguments';
import { systemParts, type ChatModel, type ChatRequest, type ChatResult, type TokenUsage } from './types';
import { AppError } from '../errors';

/**
 * Amazon Bedrock through the Converse API (one format for every Bedrock model). Model ids may be
 * foundation models (`anthropic.claude-…`) or cross-region inference profiles (`us.anthropic.claude-…`,
 * `eu.…`, `global.…`). Where the model supports prompt caching, the tools, the stable system prompt
 * and the grounding context each end in a `cachePoint`; elsewhere Bedrock refuses the mark, so it
 * is only sent to those models (or as the provider's `promptCaching` says).
 */
const finish = (reason: string | undefined): ChatResult['finishReason'] =>
  reason === 'end_turn' || reason === 'stop_sequence'
    ? 'stop'
    : reason === 'max_tokens'
      ? 'length'
      : reason === 'content_filtered'
        ? 'content_filter'
        : reason === 'tool_use'
          ? 'tool_calls'
          : 'other';

/** A JSON value as the SDK types it. */
type DocumentType = NonNullable<ToolUseBlock['input']>;



/** This turn's tool rounds in the Converse API's words: toolUse blocks, then the user's toolResult blocks. */
function toolMessages(request: ChatRequest): Message[] {
  return (request.toolRounds ?? []).flatMap((round): Message[] => [
    { role: 'assistant', content: round.calls.map((c) => ({ toolUse: { toolUseId: c.id, name: c.name, input: (c.arguments ?? {}) as DocumentType } })) },
    { role: 'user', content: round.results.map((r) => ({ toolResult: { toolUseId: r.id, content: [{ text: r.content }], status: r.isError ? 'error' : 'success' } })) },
  ]);
}

/** Models Bedrock caches prompts for (Claude 3.5 Haiku, 3.7 Sonnet and later; Nova), in any region's profile. */
const CACHING_MODELS = /(^|\.)(anthropic\.claude-(3-5-haiku|3-7-sonnet|sonnet-4|opus-4|haiku-4)|amazon\.nova-)/;
export const cachesPrompts = (modelId: string, setting?: boolean) => setting ?? CACHING_MODELS.test(modelId);

const CACHE_POINT = { cachePoint: { type: 'default' as const } };

/** Bedrock counts cache reads and writes apart from `inputTokens`: the prompt is all three. */
function usageOf(usage: { inputTokens?: number; outputTokens?: number; cacheReadInputTokens?: number; cacheWriteInputTokens?: number } | undefined): TokenUsage {
  const read = usage?.cacheReadInputTokens;
  const written = usage?.cacheWriteInputTokens;
  return {
    inputTokens: (usage?.inputTokens ?? 0) + (read ?? 0) + (written ?? 0),
    outputTokens: usage?.outputTokens ?? 0,
    ...(read !== undefined ? { cachedInputTokens: read } : {}),
    ...(written !== undefined ? { cacheWriteTokens: written } : {}),
  };
}

/** `name`: the provider's name in errors (a MODEL_PROVIDERS name, default bedrock). */
/** `client` makes the SDK's client on first use (its module is loaded only then). */
export function bedrockProvider(client: () => Promise<BedrockRuntimeClient>, options: { name?: string; promptCaching?: boolean } = {}): ChatModel {
  const provider = options.name ?? 'bedrock';
  const input = (request: ChatRequest) => {
    const caching = cachesPrompts(request.model, options.promptCaching);
    const { stable, context } = systemParts(request);
    const system = [stable, context].filter((t): t is string => Boolean(t)).flatMap((text) => (caching ? [{ text }, CACHE_POINT] : [{ text }]));
    return {
      modelId: request.model,
      messages: [...request.messages.map((m): Message => ({ role: m.role, content: [{ text: m.content }] })), ...toolMessages(request)],
      ...(request.tools?.length
        ? {
            toolConfig: {
              tools: [
                ...request.tools.map((t) => ({ toolSpec: { name: t.name, description: t.description, inputSchema: { json: t.parameters as DocumentType } } })),
                ...(caching ? [CACHE_POINT] : []),
              ],
              ...(request.toolChoice ? { toolChoice: request.toolChoice === 'required' ? { any: {} } : { tool: { name: request.toolChoice.name } } } : {}),
            },
          }
        : {}),
      ...(system.length > 0 ? { system } : {}),
      // An agent's Bedrock guardrail, applied by the Converse API besides Cairn's own.
      ...(request.bedrockGuardrail ? { guardrailConfig: { guardrailIdentifier: request.bedrockGuardrail.identifier, guardrailVersion: request.bedrockGuardrail.version } } : {}),
      inferenceConfig: {
        temperature: request.temperature,
        maxTokens: request.maxTokens,
        ...(request.topP !== undefined ? { topP: request.topP } : {}),
        ...(request.stop?.length ? { stopSequences: request.stop } : {}),
      },
    };
  };
  const failed = (error: unknown, signal: AbortSignal) => {
    if (error instanceof AppError) return error;
    if (signal.aborted) return providerError(provider, 'timeout');
    const { $metadata, $response } = error as { $metadata?: { httpStatusCode?: number }; $response?: { headers?: Record<string, string> } };
    return providerError(provider, $metadata?.httpStatusCode ?? 'network', (error as Error).message, retryAfterOf($response?.headers?.['retry-after'], $response?.headers?.date));
  };
  const generate = async (request: ChatRequest, signal: AbortSignal): Promise<ChatResult> => {
    try {
      const { ConverseCommand } = await bedrockSdk();
      const out = await (await client()).send(new ConverseCommand(input(request)), { abortSignal: signal });
      const content = out.output?.message?.content ?? [];
      const calls = content.filter((c) => c.toolUse).map((c) => ({ id: c.toolUse!.toolUseId ?? '', name: c.toolUse!.name ?? '', arguments: argumentsOf(c.toolUse!.input) }));
      return {
        text: content.map((c) => c.text ?? '').join(''),
        usage: usageOf(out.usage),
        finishReason: calls.length > 0 ? 'tool_calls' : finish(out.stopReason),
        ...(calls.length > 0 ? { toolCalls: calls } : {}),
      };
    } catch (error) {
      throw failed(error, signal);
    }
  };
  return {
    provider: 'bedrock',
    supportsTools: true,
    generate,
    async *stream(request, signal) {
      let text = '';
      let reason: string | undefined;
      let usage: TokenUsage = { inputTokens: 0, outputTokens: 0 };
      // toolUse blocks by index: id and name at their start, the input as JSON fragments.
      const blocks: Array<{ id: string; name: string; json: string }> = [];
      try {
        const { ConverseStreamCommand } = await bedrockSdk();
        const out = await (await client()).send(new ConverseStreamCommand(input(request)), { abortSignal: signal });
        for await (const event of out.stream ?? []) {
          const started = event.contentBlockStart?.start?.toolUse;
          if (started) blocks[event.contentBlockStart!.contentBlockIndex ?? 0] = { id: started.toolUseId ?? '', name: started.name ?? '', json: '' };
          const fragment = event.contentBlockDelta?.delta?.toolUse?.input;
          if (fragment !== undefined) {
            const block = blocks[event.contentBlockDelta!.contentBlockIndex ?? 0];
            if (block) block.json += fragment;
          }
          const delta = event.contentBlockDelta?.delta?.text;
          if (delta) {
            text += delta;
            yield delta;
          }
          if (event.messageStop) reason = event.messageStop.stopReason;
          if (event.metadata?.usage) usage = usageOf(event.metadata.usage);
          // An error in the stream, with the status the same error has outside one (a chain falls back on 429 and 5xx).
          if (event.throttlingException) throw providerError(provider, 429, event.throttlingException.message);
          if (event.serviceUnavailableException) throw providerError(provider, 503, event.serviceUnavailableException.message);
          if (event.internalServerException) throw providerError(provider, 500, event.internalServerException.message);
          if (event.validationException) throw providerError(provider, 400, event.validationException.message);
          if (event.modelStreamErrorException) throw providerError(provider, 'stream', event.modelStreamErrorException.message);
        }
      } catch (error) {
        throw failed(error, signal);
      }
      const toolCalls = blocks.filter(Boolean).map((b) => ({ id: b.id, name: b.name, arguments: parseArguments(b.json) }));
      return { text, usage, finishReason: toolCalls.length > 0 ? 'tool_calls' : finish(reason), ...(toolCalls.length > 0 ? { toolCalls } : {}) };
    },
  };
}
