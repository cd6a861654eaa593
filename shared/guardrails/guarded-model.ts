import type { ChatRequest, ChatResult, ResolvedModel } from '../models/types';
import type { Guard } from './guard';

/**
 * A model behind a turn's guardrails: what it is given passes the guard first (the person's
 * message checked, personal values tokenized or masked in the conversation, memory and tool
 * results), and what it answers passes it after (tokens restored for the person and in the
 * arguments of the tools that act on them, the reply checked). A refused message never reaches it.
 */
export function guardedModel(resolved: ResolvedModel, guard: Guard): ResolvedModel {
  const { engine } = resolved;
  const bedrockGuardrail = guard.settings.bedrockGuardrail;

  function protectedRequest(request: ChatRequest): ChatRequest | undefined {
    const last = request.messages.at(-1);
    if (last?.role === 'user') guard.checkMessage(last.content);
    const messages = request.messages.map((m) => ({ ...m, content: guard.protect(m.content, 'input') }));
    if (guard.blocked) return undefined;
    return {
      ...request,
      messages,
      ...(request.summary ? { summary: guard.protect(request.summary, 'input') } : {}),
      ...(request.memory ? { memory: request.memory.map((fact) => guard.protect(fact, 'input')) } : {}),
      ...(request.toolRounds
        ? {
            toolRounds: request.toolRounds.map((round) => ({
              // The calls' arguments were restored for the tools: the provider gets its own tokens back.
              calls: round.calls.map((c) => ({ ...c, ...(c.arguments ? { arguments: guard.storedJson(c.arguments) } : {}) })),
              results: round.results.map((r) => ({ ...r, content: guard.protect(r.content, 'tool_result') })),
            })),
          }
        : {}),
      ...(bedrockGuardrail && resolved.name.startsWith('bedrock/') ? { bedrockGuardrail } : {}),
    };
  }
  const refused = (): ChatResult => ({ text: guard.blockedMessage, usage: { inputTokens: 0, outputTokens: 0 }, finishReason: 'stop' });
  const answered = (result: ChatResult, text: string): ChatResult => ({
    ...result,
    text,
    ...(result.toolCalls ? { toolCalls: result.toolCalls.map((c) => ({ ...c, ...(c.arguments ? { arguments: guard.restoreArgs(c.arguments) } : {}) })) } : {}),
  });

  return {
    ...resolved,
    engine: {
      provider: engine.provider,
      supportsTools: engine.supportsTools,
      async generate(request, signal) {
        const sent = protectedRequest(request);
        if (!sent) return refused();
        const result = await engine.generate(sent, signal);
        return answered(result, result.text ? guard.checkOutput(result.text) : result.text);
      },
      async *stream(request, signal) {
        const sent = protectedRequest(request);
        if (!sent) {
          yield guard.blockedMessage;
          return refused();
        }
        const checked = guard.stream();
        let shown = '';
        const steps = engine.stream(sent, signal);
        let step = await steps.next();
        for (; !step.done; step = await steps.next()) {
          const out = checked.push(step.value);
          if (out) {
            shown += out;
            yield out;
          }
        }
        const tail = checked.end();
        if (tail) {
          shown += tail;
          yield tail;
        }
        return answered(step.value, guard.blocked ? guard.blockedMessage : shown);
      },
    },
  };
}
