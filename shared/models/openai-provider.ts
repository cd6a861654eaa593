import { providerFetch, sseData } from './provider-error';
import { parseArguments } from './tool-arguments';
import { systemPrompt, type ChatModel, type ChatRequest, type ChatResult, type TokenUsage } from './types';

/**
 * OpenAI's chat completions wire format: OpenAI itself or any compatible server (OPENAI_BASE_URL, or
 * a MODEL_PROVIDERS `openai-compatible` provider). OpenAI caches long prompt prefixes by itself: the
 * tokens it read from its cache come back as `prompt_tokens_details.cached_tokens`.
 */
/** This turn's tool rounds in OpenAI's words: the assistant's tool_calls, then one `tool` message per result. */
function toolMessages(request: ChatRequest) {
  return (request.toolRounds ?? []).flatMap((round) => [
    { role: 'assistant', content: null, tool_calls: round.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments ?? {}) } })) },
    ...round.results.map((r) => ({ role: 'tool', tool_call_id: r.id, content: r.isError ? `Error: ${r.content}` : r.content })),
  ]);
}

function body(request: ChatRequest, stream: boolean) {
  const system = systemPrompt(request);
  return JSON.stringify({
    model: request.model,
    messages: [...(system ? [{ role: 'system', content: system }] : []), ...request.messages, ...toolMessages(request)],
    ...(request.tools?.length
      ? {
          tools: request.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } })),
          ...(request.toolChoice ? { tool_choice: request.toolChoice === 'required' ? 'required' : { type: 'function', function: { name: request.toolChoice.name } } } : {}),
        }
      : {}),
    temperature: request.temperature,
    max_tokens: request.maxTokens,
    ...(request.responseFormat
      ? {
          response_format:
            request.responseFormat.type === 'json_schema'
              ? { type: 'json_schema', json_schema: { name: request.responseFormat.name, schema: request.responseFormat.schema, strict: false } }
              : { type: 'json_object' },
        }
      : {}),
    ...(request.topP !== undefined ? { top_p: request.topP } : {}),
    ...(request.stop?.length ? { stop: request.stop } : {}),
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
  });
}

const finish = (reason: string | null | undefined): ChatResult['finishReason'] =>
  reason === 'stop' || reason === 'length' || reason === 'content_filter' || reason === 'tool_calls' ? reason : 'other';


type WireToolCall = { index?: number; id?: string; function?: { name?: string; arguments?: string } };
type WireUsage = { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens?: number } | null };

const usageOf = (usage: WireUsage | null | undefined): TokenUsage => {
  const cached = usage?.prompt_tokens_details?.cached_tokens;
  return { inputTokens: usage?.prompt_tokens ?? 0, outputTokens: usage?.completion_tokens ?? 0, ...(cached ? { cachedInputTokens: cached } : {}) };
};

/** `name`: the provider's name in errors (a MODEL_PROVIDERS name, default openai); `apiKey` may be absent for servers that take none. */
export function openaiProvider(options: { baseUrl: string; apiKey?: string; name?: string }): ChatModel {
  const post = (request: ChatRequest, stream: boolean, signal: AbortSignal) =>
    providerFetch(options.name ?? 'openai', `${options.baseUrl.replace(/\/$/, '')}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
      body: body(request, stream),
    }, signal);
  return {
    provider: 'openai',
    supportsTools: true,
    async generate(request, signal) {
      const json = (await (await post(request, false, signal)).json()) as {
        choices: Array<{ message: { content: string | null; tool_calls?: WireToolCall[] }; finish_reason: string }>;
        usage?: WireUsage;
      };
      const choice = json.choices[0];
      const calls = choice?.message.tool_calls ?? [];
      return {
        text: choice?.message.content ?? '',
        usage: usageOf(json.usage),
        finishReason: calls.length > 0 ? 'tool_calls' : finish(choice?.finish_reason),
        ...(calls.length > 0 ? { toolCalls: calls.map((c, i) => ({ id: c.id ?? `call_${i}`, name: c.function?.name ?? '', arguments: parseArguments(c.function?.arguments) })) } : {}),
      };
    },
    async *stream(request, signal) {
      const response = await post(request, true, signal);
      let text = '';
      let reason: string | undefined;
      let usage: TokenUsage = { inputTokens: 0, outputTokens: 0 };
      const calls: Array<{ id: string; name: string; arguments: string }> = [];
      for await (const { data } of sseData(response.body!)) {
        if (data === '[DONE]') break;
        const chunk = JSON.parse(data) as {
          choices?: Array<{ delta?: { content?: string; tool_calls?: WireToolCall[] }; finish_reason?: string | null }>;
          usage?: WireUsage | null;
        };
        // A streamed tool call comes in pieces by index: its id and name first, its arguments in fragments.
        for (const piece of chunk.choices?.[0]?.delta?.tool_calls ?? []) {
          const at = piece.index ?? 0;
          const call = (calls[at] ??= { id: piece.id ?? `call_${at}`, name: '', arguments: '' });
          if (piece.id) call.id = piece.id;
          call.name += piece.function?.name ?? '';
          call.arguments += piece.function?.arguments ?? '';
        }
        const delta = chunk.choices?.[0]?.delta?.content;
        if (delta) {
          text += delta;
          yield delta;
        }
        reason = chunk.choices?.[0]?.finish_reason ?? reason;
        if (chunk.usage) usage = usageOf(chunk.usage);
      }
      const toolCalls = calls.filter(Boolean).map((c) => ({ id: c.id, name: c.name, arguments: parseArguments(c.arguments) }));
      return { text, usage, finishReason: toolCalls.length > 0 ? 'tool_calls' : finish(reason), ...(toolCalls.length > 0 ? { toolCalls } : {}) };
    },
  };
}
