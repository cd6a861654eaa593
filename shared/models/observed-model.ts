import { emitMetrics } from '../metrics';
import { endSpan, SpanKind, startSpan } from '../telemetry';
import { aroundEachCall } from './around-each-call';
import type { ChatRequest, ChatResult, ResolvedModel } from './types';

/**
 * A model whose every call is seen: a span as the OpenTelemetry GenAI conventions name it (`chat
 * <model>` with the provider, the request's settings, the tokens used and why it finished), and
 * metrics by model (calls, failures, tokens, latency) with the service's token total beside them,
 * which the token-spend alarm watches.
 */
export function observedModel(resolved: ResolvedModel): ResolvedModel {
  const { engine } = resolved;
  const open = (request: ChatRequest) => ({
    started: performance.now(),
    span: startSpan(`chat ${resolved.model}`, {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': engine.provider,
        'gen_ai.request.model': resolved.model,
        'gen_ai.request.max_tokens': request.maxTokens,
        'gen_ai.request.temperature': request.temperature,
        'cairn.model': resolved.name,
        'cairn.tools': request.tools?.length ?? 0,
      },
    }),
  });
  const close = ({ started, span }: ReturnType<typeof open>, result: ChatResult | undefined, error: unknown) => {
    const tokens = { input: result?.usage.inputTokens ?? 0, output: result?.usage.outputTokens ?? 0 };
    if (result) {
      span.setAttributes({
        'gen_ai.usage.input_tokens': tokens.input,
        'gen_ai.usage.output_tokens': tokens.output,
        'gen_ai.response.finish_reasons': [result.finishReason],
        // Of the input tokens, those read from and written to the provider's prompt cache.
        ...(result.usage.cachedInputTokens !== undefined ? { 'gen_ai.usage.cache_read.input_tokens': result.usage.cachedInputTokens } : {}),
        ...(result.usage.cacheWriteTokens !== undefined ? { 'gen_ai.usage.cache_creation.input_tokens': result.usage.cacheWriteTokens } : {}),
      });
    }
    endSpan(span, error);
    emitMetrics(
      { model: resolved.name },
      {
        ModelCalls: { value: 1, unit: 'count' },
        ModelErrors: { value: result ? 0 : 1, unit: 'count' },
        InputTokens: { value: tokens.input, unit: 'count' },
        OutputTokens: { value: tokens.output, unit: 'count' },
        CachedInputTokens: { value: result?.usage.cachedInputTokens ?? 0, unit: 'count' },
        ModelLatency: { value: performance.now() - started, unit: 'ms' },
      },
    );
    emitMetrics({}, { Tokens: { value: tokens.input + tokens.output, unit: 'count' } });
  };
  return { ...resolved, engine: aroundEachCall(engine, { start: open, end: close }) };
}
