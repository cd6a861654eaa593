import type { ModelResolver } from '../../shared/models/types';
import type { ChatModel, ChatRequest } from '../../shared/models/types';

/**
 * A model provider that answers with the given texts in turn and keeps every request, resolving
 * every model name to itself: for code that must behave the same with any real provider.
 */
export function scriptedModel(...replies: string[]): { models: ModelResolver; requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  const engine: ChatModel = {
    provider: 'scripted',
    supportsTools: false,
    async generate(request) {
      requests.push(request);
      const text = replies[Math.min(requests.length - 1, replies.length - 1)] ?? '';
      return { text, usage: { inputTokens: 10, outputTokens: 2 }, finishReason: 'stop' };
    },
    async *stream(request, signal) {
      const result = await engine.generate(request, signal);
      yield result.text;
      return result;
    },
  };
  return { models: { resolve: async (name) => ({ name: `scripted/${name}`, model: name, engine }) }, requests };
}
