import { BedrockRuntimeClient, ConverseCommand } from '@aws-sdk/client-bedrock-runtime';
import { providerError } from './provider-error';
import { systemPrompt, type ChatModel, type ChatRequest, type ChatResult } from './types';

/** Amazon Bedrock through the Converse API (one format for every Bedrock model). */
const finish = (reason: string | undefined): ChatResult['finishReason'] =>
  reason === 'end_turn' || reason === 'stop_sequence' ? 'stop' : reason === 'max_tokens' ? 'length' : reason === 'content_filtered' ? 'content_filter' : 'other';

export function bedrockProvider(client: BedrockRuntimeClient): ChatModel {
  const generate = async (request: ChatRequest, signal: AbortSignal): Promise<ChatResult> => {
    const system = systemPrompt(request);
    try {
      const out = await client.send(
        new ConverseCommand({
          modelId: request.model,
          messages: request.messages.map((m) => ({ role: m.role, content: [{ text: m.content }] })),
          ...(system ? { system: [{ text: system }] } : {}),
          inferenceConfig: { temperature: request.temperature, maxTokens: request.maxTokens },
        }),
        { abortSignal: signal },
      );
      return {
        text: (out.output?.message?.content ?? []).map((c) => c.text ?? '').join(''),
        usage: { inputTokens: out.usage?.inputTokens ?? 0, outputTokens: out.usage?.outputTokens ?? 0 },
        finishReason: finish(out.stopReason),
      };
    } catch (error) {
      if (signal.aborted) throw providerError('bedrock', 'timeout');
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      throw providerError('bedrock', status ?? 'network', (error as Error).message);
    }
  };
  return {
    provider: 'bedrock',
    generate,
    // Streaming (ConverseStream) is not wired yet: the whole answer arrives as one delta.
    async *stream(request, signal) {
      const result = await generate(request, signal);
      if (result.text) yield result.text;
      return result;
    },
  };
}
