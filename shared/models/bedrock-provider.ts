import type { BedrockRuntimeClient} from '@aws-sdk/client-bedrock-runtime';
import { ConverseCommand, ConverseStreamCommand, type Message, type ToolUseBlock } from '@aws-sdk/client-bedrock-runtime';
import { providerError } from './provider-error';
import { argumentsOf, parseArguments } from './tool-arguments';
import { systemPrompt, type ChatModel, type ChatRequest, type ChatResult } from './types';
import { AppError } from '../errors';

/** Amazon Bedrock through the Converse API (one format for every Bedrock model). */
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

export function bedrockProvider(client: BedrockRuntimeClient): ChatModel {
  const input = (request: ChatRequest) => {
    const system = systemPrompt(request);
    return {
      modelId: request.model,
      messages: [...request.messages.map((m): Message => ({ role: m.role, content: [{ text: m.content }] })), ...toolMessages(request)],
      ...(request.tools?.length
        ? {
            toolConfig: {
              tools: request.tools.map((t) => ({ toolSpec: { name: t.name, description: t.description, inputSchema: { json: t.parameters as DocumentType } } })),
              ...(request.toolChoice ? { toolChoice: request.toolChoice === 'required' ? { any: {} } : { tool: { name: request.toolChoice.name } } } : {}),
            },
          }
        : {}),
      ...(system ? { system: [{ text: system }] } : {}),
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
    if (signal.aborted) return providerError('bedrock', 'timeout');
    const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    return providerError('bedrock', status ?? 'network', (error as Error).message);
  };
  const generate = async (request: ChatRequest, signal: AbortSignal): Promise<ChatResult> => {
    try {
      const out = await client.send(new ConverseCommand(input(request)), { abortSignal: signal });
      const content = out.output?.message?.content ?? [];
      const calls = content.filter((c) => c.toolUse).map((c) => ({ id: c.toolUse!.toolUseId ?? '', name: c.toolUse!.name ?? '', arguments: argumentsOf(c.toolUse!.input) }));
      return {
        text: content.map((c) => c.text ?? '').join(''),
        usage: { inputTokens: out.usage?.inputTokens ?? 0, outputTokens: out.usage?.outputTokens ?? 0 },
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
      const usage = { inputTokens: 0, outputTokens: 0 };
      // toolUse blocks by index: id and name at their start, the input as JSON fragments.
      const blocks: Array<{ id: string; name: string; json: string }> = [];
      try {
        const out = await client.send(new ConverseStreamCommand(input(request)), { abortSignal: signal });
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
      const toolCalls = blocks.filter(Boolean).map((b) => ({ id: b.id, name: b.name, arguments: parseArguments(b.json) }));
      return { text, usage, finishReason: toolCalls.length > 0 ? 'tool_calls' : finish(reason), ...(toolCalls.length > 0 ? { toolCalls } : {}) };
    },
  };
}
