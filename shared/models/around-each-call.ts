import type { ChatModel, ChatRequest, ChatResult } from './types';

/**
 * A model whose every call, whole or streamed, is bracketed: `start` before it (it may refuse by
 * throwing), `end` after it with the result, or the error it failed with. Tracing and token budgets
 * wrap models this way.
 */
export function aroundEachCall<Handle>(
  engine: ChatModel,
  hooks: { start(request: ChatRequest): Handle | Promise<Handle>; end(handle: Handle, result: ChatResult | undefined, error: unknown): void | Promise<void> },
): ChatModel {
  return {
    provider: engine.provider,
    supportsTools: engine.supportsTools,
    async generate(request, signal) {
      const handle = await hooks.start(request);
      let result: ChatResult | undefined;
      let failure: unknown;
      try {
        result = await engine.generate(request, signal);
        return result;
      } catch (error) {
        failure = error;
        throw error;
      } finally {
        await hooks.end(handle, result, failure);
      }
    },
    async *stream(request, signal) {
      const handle = await hooks.start(request);
      let result: ChatResult | undefined;
      let failure: unknown;
      try {
        result = yield* engine.stream(request, signal);
        return result;
      } catch (error) {
        failure = error;
        throw error;
      } finally {
        await hooks.end(handle, result, failure);
      }
    },
  };
}
