import { endSpan, SpanKind, startSpan } from '../telemetry';
import { aroundEachCall } from './around-each-call';
import type { ChatRequest, ChatResult, ResolvedModel } from './types';

/**
 * A model whose every call is a span as the OpenTelemetry GenAI conventions name it: `chat <model>`
 * with the provider, the request's settings, the tokens used and why it finished.
 */
export function tracedModel(resolved: ResolvedModel): ResolvedModel {
  const { engine } = resolved;
  const open = (request: ChatRequest) =>
    startSpan(`chat ${resolved.model}`, {
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
    });
  const close = (span: ReturnType<typeof open>, result: ChatResult) =>
    span.setAttributes({ 'gen_ai.usage.input_tokens': result.usage.inputTokens, 'gen_ai.usage.output_tokens': result.usage.outputTokens, 'gen_ai.response.finish_reasons': [result.finishReason] });
  return {
    ...resolved,
    engine: aroundEachCall(engine, {
      start: open,
      end: (span, result, error) => {
        if (result) close(span, result);
        endSpan(span, error);
      },
    }),
  };
}
