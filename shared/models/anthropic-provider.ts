import { providerFetch, sseData } from './provider-error';
import { argumentsOf, parseArguments } from './tool-arguments';
import { systemParts, type ChatModel, type ChatRequest, type ChatResult, type TokenUsage } from './types';

/**
 * Anthropic's Messages API. With prompt caching (the default) the tools, the stable system prompt and
 * the grounding context each end in a `cache_control` breakpoint; Anthropic caches a prefix once it
 * is long enough and ignores the mark otherwise.
 */
const finish = (reason: string | null | undefined): ChatResult['finishReason'] =>
  reason === 'end_turn' || reason === 'stop_sequence' ? 'stop' : reason === 'max_tokens' ? 'length' : reason === 'tool_use' ? 'tool_calls' : 'other';

/** This turn's tool rounds in Anthropic's words: tool_use blocks, then the user's tool_result blocks. */
function toolMessages(request: ChatRequest) {
  return (request.toolRounds ?? []).flatMap((round) => [
    { role: 'assistant', content: round.calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.arguments ?? {} })) },
    { role: 'user', content: round.results.map((r) => ({ type: 'tool_result', tool_use_id: r.id, content: r.content, ...(r.isError ? { is_error: true } : {}) })) },
  ]);
}



const CACHED = { cache_control: { type: 'ephemeral' } } as const;

/** The system prompt as blocks, each part marked cacheable when caching. */
function systemBlocks(request: ChatRequest, caching: boolean) {
  const { stable, context } = systemParts(request);
  const blocks = [stable, context].filter((t): t is string => Boolean(t)).map((text) => ({ type: 'text', text, ...(caching ? CACHED : {}) }));
  return blocks.length > 0 ? blocks : undefined;
}

type WireUsage = { input_tokens?: number; output_tokens?: number; cache_read_input_tokens?: number | null; cache_creation_input_tokens?: number | null };

/** Anthropic counts cache reads and writes apart from `input_tokens`: the prompt is all three. */
function usageOf(usage: WireUsage): TokenUsage {
  const read = usage.cache_read_input_tokens ?? 0;
  const written = usage.cache_creation_input_tokens ?? 0;
  return {
    inputTokens: (usage.input_tokens ?? 0) + read + written,
    outputTokens: usage.output_tokens ?? 0,
    ...(usage.cache_read_input_tokens != null ? { cachedInputTokens: read } : {}),
    ...(usage.cache_creation_input_tokens != null ? { cacheWriteTokens: written } : {}),
  };
}

/** `name`: the provider's name in errors (a MODEL_PROVIDERS name, default anthropic). */
export function anthropicProvider(options: { baseUrl: string; apiKey: string; name?: string; promptCaching?: boolean }): ChatModel {
  const caching = options.promptCaching ?? true;
  const post = (request: ChatRequest, stream: boolean, signal: AbortSignal) => {
    const system = systemBlocks(request, caching);
    return providerFetch(options.name ?? 'anthropic', `${options.baseUrl.replace(/\/$/, '')}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': options.apiKey, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: request.model,
        max_tokens: request.maxTokens,
        temperature: Math.min(1, request.temperature),
        ...(request.topP !== undefined ? { top_p: request.topP } : {}),
        ...(request.stop?.length ? { stop_sequences: request.stop } : {}),
        ...(system ? { system } : {}),
        messages: [...request.messages, ...toolMessages(request)],
        ...(request.tools?.length
          ? {
              tools: request.tools.map((t, i, all) => ({ name: t.name, description: t.description, input_schema: t.parameters, ...(caching && i === all.length - 1 ? CACHED : {}) })),
              ...(request.toolChoice ? { tool_choice: request.toolChoice === 'required' ? { type: 'any' } : { type: 'tool', name: request.toolChoice.name } } : {}),
            }
          : {}),
        stream,
      }),
    }, signal);
  };
  return {
    provider: 'anthropic',
    supportsTools: true,
    async generate(request, signal) {
      const json = (await (await post(request, false, signal)).json()) as {
        content: Array<{ type: string; text?: string; id?: string; name?: string; input?: unknown }>;
        stop_reason: string;
        usage: WireUsage;
      };
      const calls = json.content.filter((c) => c.type === 'tool_use').map((c) => ({ id: c.id!, name: c.name!, arguments: argumentsOf(c.input) }));
      return {
        text: json.content.filter((c) => c.type === 'text').map((c) => c.text).join(''),
        usage: usageOf(json.usage),
        finishReason: calls.length > 0 ? 'tool_calls' : finish(json.stop_reason),
        ...(calls.length > 0 ? { toolCalls: calls } : {}),
      };
    },
    async *stream(request, signal) {
      const response = await post(request, true, signal);
      let text = '';
      let reason: string | undefined;
      let wire: WireUsage = {};
      // tool_use blocks by index: id and name at their start, the input as JSON fragments.
      const blocks: Array<{ id: string; name: string; json: string }> = [];
      for await (const { data } of sseData(response.body!)) {
        const event = JSON.parse(data) as {
          type: string;
          index?: number;
          content_block?: { type: string; id?: string; name?: string };
          delta?: { type?: string; text?: string; stop_reason?: string; partial_json?: string };
          message?: { usage?: WireUsage };
          usage?: WireUsage;
          error?: { message: string };
        };
        if (event.type === 'content_block_start' && event.content_block?.type === 'tool_use') {
          blocks[event.index ?? 0] = { id: event.content_block.id ?? '', name: event.content_block.name ?? '', json: '' };
        } else if (event.type === 'content_block_delta' && event.delta?.type === 'input_json_delta') {
          const block = blocks[event.index ?? 0];
          if (block) block.json += event.delta.partial_json ?? '';
        } else if (event.type === 'content_block_delta' && event.delta?.type === 'text_delta' && event.delta.text) {
          text += event.delta.text;
          yield event.delta.text;
        } else if (event.type === 'message_start' && event.message?.usage) {
          wire = event.message.usage;
        } else if (event.type === 'message_delta') {
          reason = event.delta?.stop_reason ?? reason;
          // The final counts (output tokens, and cache counts where the provider repeats them).
          if (event.usage) wire = { ...wire, ...Object.fromEntries(Object.entries(event.usage).filter(([, v]) => v != null)) };
        } else if (event.type === 'error') {
          throw new Error(event.error?.message ?? 'anthropic stream error');
        }
      }
      const toolCalls = blocks.filter(Boolean).map((b) => ({ id: b.id, name: b.name, arguments: parseArguments(b.json) }));
      return { text, usage: usageOf(wire), finishReason: toolCalls.length > 0 ? 'tool_calls' : finish(reason), ...(toolCalls.length > 0 ? { toolCalls } : {}) };
    },
  };
}
