import { providerFetch, sseData } from './provider-error';
import { systemPrompt, type ChatModel, type ChatRequest, type ChatResult } from './types';

/** OpenAI's chat completions wire format: OpenAI itself or any compatible server (OPENAI_BASE_URL). */
function body(request: ChatRequest, stream: boolean) {
  const system = systemPrompt(request);
  return JSON.stringify({
    model: request.model,
    messages: [...(system ? [{ role: 'system', content: system }] : []), ...request.messages],
    temperature: request.temperature,
    max_tokens: request.maxTokens,
    ...(request.topP !== undefined ? { top_p: request.topP } : {}),
    ...(request.stop?.length ? { stop: request.stop } : {}),
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
  });
}

const finish = (reason: string | null | undefined): ChatResult['finishReason'] =>
  reason === 'stop' || reason === 'length' || reason === 'content_filter' ? reason : 'other';

export function openaiProvider(options: { baseUrl: string; apiKey: string }): ChatModel {
  const post = (request: ChatRequest, stream: boolean, signal: AbortSignal) =>
    providerFetch('openai', `${options.baseUrl.replace(/\/$/, '')}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${options.apiKey}` },
      body: body(request, stream),
    }, signal);
  return {
    provider: 'openai',
    async generate(request, signal) {
      const json = (await (await post(request, false, signal)).json()) as {
        choices: Array<{ message: { content: string | null }; finish_reason: string }>;
        usage?: { prompt_tokens: number; completion_tokens: number };
      };
      const choice = json.choices[0];
      return {
        text: choice?.message.content ?? '',
        usage: { inputTokens: json.usage?.prompt_tokens ?? 0, outputTokens: json.usage?.completion_tokens ?? 0 },
        finishReason: finish(choice?.finish_reason),
      };
    },
    async *stream(request, signal) {
      const response = await post(request, true, signal);
      let text = '';
      let reason: string | undefined;
      let usage = { inputTokens: 0, outputTokens: 0 };
      for await (const { data } of sseData(response.body!)) {
        if (data === '[DONE]') break;
        const chunk = JSON.parse(data) as {
          choices?: Array<{ delta?: { content?: string }; finish_reason?: string | null }>;
          usage?: { prompt_tokens: number; completion_tokens: number } | null;
        };
        const delta = chunk.choices?.[0]?.delta?.content;
        if (delta) {
          text += delta;
          yield delta;
        }
        reason = chunk.choices?.[0]?.finish_reason ?? reason;
        if (chunk.usage) usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
      }
      return { text, usage, finishReason: finish(reason) };
    },
  };
}
