import { providerFetch, sseData } from './provider-error';
import { systemPrompt, type ChatModel, type ChatRequest, type ChatResult } from './types';

/** Anthropic's Messages API. */
const finish = (reason: string | null | undefined): ChatResult['finishReason'] =>
  reason === 'end_turn' || reason === 'stop_sequence' ? 'stop' : reason === 'max_tokens' ? 'length' : 'other';

export function anthropicProvider(options: { baseUrl: string; apiKey: string }): ChatModel {
  const post = (request: ChatRequest, stream: boolean, signal: AbortSignal) => {
    const system = systemPrompt(request);
    return providerFetch('anthropic', `${options.baseUrl.replace(/\/$/, '')}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': options.apiKey, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: request.model,
        max_tokens: request.maxTokens,
        temperature: Math.min(1, request.temperature),
        ...(request.topP !== undefined ? { top_p: request.topP } : {}),
        ...(request.stop?.length ? { stop_sequences: request.stop } : {}),
        ...(system ? { system } : {}),
        messages: request.messages,
        stream,
      }),
    }, signal);
  };
  return {
    provider: 'anthropic',
    // Native tool calling is not wired for this provider yet: agents with tools answer 422 here.
    supportsTools: false,
    async generate(request, signal) {
      const json = (await (await post(request, false, signal)).json()) as {
        content: Array<{ type: string; text?: string }>;
        stop_reason: string;
        usage: { input_tokens: number; output_tokens: number };
      };
      return {
        text: json.content.filter((c) => c.type === 'text').map((c) => c.text).join(''),
        usage: { inputTokens: json.usage.input_tokens, outputTokens: json.usage.output_tokens },
        finishReason: finish(json.stop_reason),
      };
    },
    async *stream(request, signal) {
      const response = await post(request, true, signal);
      let text = '';
      let reason: string | undefined;
      const usage = { inputTokens: 0, outputTokens: 0 };
      for await (const { data } of sseData(response.body!)) {
        const event = JSON.parse(data) as {
          type: string;
          delta?: { type?: string; text?: string; stop_reason?: string };
          message?: { usage?: { input_tokens: number; output_tokens: number } };
          usage?: { output_tokens: number };
          error?: { message: string };
        };
        if (event.type === 'content_block_delta' && event.delta?.type === 'text_delta' && event.delta.text) {
          text += event.delta.text;
          yield event.delta.text;
        } else if (event.type === 'message_start' && event.message?.usage) {
          usage.inputTokens = event.message.usage.input_tokens;
          usage.outputTokens = event.message.usage.output_tokens;
        } else if (event.type === 'message_delta') {
          reason = event.delta?.stop_reason ?? reason;
          if (event.usage) usage.outputTokens = event.usage.output_tokens;
        } else if (event.type === 'error') {
          throw new Error(event.error?.message ?? 'anthropic stream error');
        }
      }
      return { text, usage, finishReason: finish(reason) };
    },
  };
}
