import type { BedrockRuntimeClient} from '@aws-sdk/client-bedrock-runtime';
import { ConverseCommand, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime';
import { providerError } from './provider-error';
import { systemPrompt, type ChatModel, type ChatRequest, type ChatResult } from './types';
import { AppError } from '../errors';

/** Amazon Bedrock through the Converse API (one format for every Bedrock model). */
const finish = (reason: string | undefined): ChatResult['finishReason'] =>
  reason === 'end_turn' || reason === 'stop_sequence' ? 'stop' : reason === 'max_tokens' ? 'length' : reason === 'content_filtered' ? 'content_filter' : 'other';

export function bedrockProvider(client: BedrockRuntimeClient): ChatModel {
  const input = (request: ChatRequest) => {
    const system = systemPrompt(request);
    return {
      modelId: request.model,
      messages: request.messages.map((m) => ({ role: m.role, content: [{ text: m.content }] })),
      ...(system ? { system: [{ text: system }] } : {}),
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
    if (signal.aborted) return providerError('bedrock', 'timeout');
    const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    return providerError('bedrock', status ?? 'network', (error as Error).message);
  };
  const generate = async (request: ChatRequest, signal: AbortSignal): Promise<ChatResult> => {
    try {
      const out = await client.send(new ConverseCommand(input(request)), { abortSignal: signal });
      return {
        text: (out.output?.message?.content ?? []).map((c) => c.text ?? '').join(''),
        usage: { inputTokens: out.usage?.inputTokens ?? 0, outputTokens: out.usage?.outputTokens ?? 0 },
        finishReason: finish(out.stopReason),
      };
    } catch (error) {
      throw failed(error, signal);
    }
  };
  return {
    provider: 'bedrock',
    // Native tool calling is not wired for this provider yet: agents with tools answer 422 here.
    supportsTools: false,
    generate,
    async *stream(request, signal) {
      let text = '';
      let reason: string | undefined;
      const usage = { inputTokens: 0, outputTokens: 0 };
      try {
        const out = await client.send(new ConverseStreamCommand(input(request)), { abortSignal: signal });
        for await (const event of out.stream ?? []) {
          const delta = event.contentBlockDelta?.delta?.text;
          if (delta) {
            text += delta;
            yield delta;
          }
          if (event.messageStop) reason = event.messageStop.stopReason;
          if (event.metadata?.usage) {
            usage.inputTokens = event.metadata.usage.inputTokens ?? 0;
            usage.outputTokens = event.metadata.usage.outputTokens ?? 0;
          }
          const streamError = event.internalServerException ?? event.modelStreamErrorException ?? event.throttlingException ?? event.validationException ?? event.serviceUnavailableException;
          if (streamError) throw providerError('bedrock', 'stream', streamError.message);
        }
      } catch (error) {
        throw failed(error, signal);
      }
      return { text, usage, finishReason: finish(reason) };
    },
  };
}
