import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { converse, converseStream } from '../../shared/domain/conversation';
import { ValidationError } from '../../shared/errors';
import type { AppEnv } from '../../shared/http/context';
import { commonErrors } from '../../shared/http/openapi-schemas';
import type { ChatMessage, ChatResult } from '../../shared/models/types';
import { sseResponse } from '../../shared/http/sse';
import type { Runtime } from '../../shared/runtime';

/**
 * OpenAI-compatible chat completions: `model` is a Cairn agent id and the key may come as
 * `Authorization: Bearer`, so the official `openai` client talks to Cairn agents. The client sends
 * the whole history each time, so nothing is stored in Cairn sessions.
 */
const part = z.looseObject({ type: z.string(), text: z.string().optional() });
const chatInput = z
  .looseObject({
    model: z.string().min(1).openapi({ description: 'A Cairn agent id', example: 'agt_01jd8x2k3m4n5p6q7r8s9t0v1w' }),
    messages: z
      .array(z.looseObject({ role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']), content: z.union([z.string(), z.array(part), z.null()]) }))
      .min(1),
    stream: z.boolean().optional(),
  })
  .openapi('ChatCompletionRequest');

const textOf = (content: string | Array<{ text?: string }> | null) =>
  typeof content === 'string' ? content : (content ?? []).map((p) => p.text ?? '').join('');

const finishReason = (r: ChatResult['finishReason']) => (r === 'length' || r === 'content_filter' ? r : 'stop');

export function registerChatCompletions(app: OpenAPIHono<AppEnv>, rt: Runtime) {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/chat/completions',
      operationId: 'createChatCompletion',
      tags: ['Agents'],
      summary: 'OpenAI-compatible chat completions with a Cairn agent',
      security: [{ ApiKeyAuth: [] }],
      request: { body: { content: { 'application/json': { schema: chatInput } }, required: true } },
      responses: {
        200: { description: 'An OpenAI chat.completion, or chat.completion.chunk events', content: { 'application/json': { schema: z.unknown() }, 'text/event-stream': { schema: z.string() } } },
        ...commonErrors,
      },
    }),
    async (c) => {
      const scope = c.get('identity').scope;
      const body = c.req.valid('json');
      const turns: ChatMessage[] = body.messages
        .filter((m) => m.role === 'user' || m.role === 'assistant')
        .map((m) => ({ role: m.role as 'user' | 'assistant', content: textOf(m.content) }));
      const last = turns.pop();
      if (!last || last.role !== 'user' || !last.content.trim()) throw new ValidationError('messages', 'must end with a non-empty user message');
      const system = body.messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => textOf(m.content)).join('\n');
      const input = { message: last.content, history: turns, instructions: system || undefined };
      const created = Math.floor(Date.now() / 1000);
      const usageOf = (u: { inputTokens: number; outputTokens: number }) => ({ prompt_tokens: u.inputTokens, completion_tokens: u.outputTokens, total_tokens: u.inputTokens + u.outputTokens });
      if (!body.stream) {
        const { data: done } = await converse(rt, scope, body.model, input, { signal: c.req.raw.signal });
        return c.json({
          id: `chatcmpl-${done.sessionId.slice(4)}`,
          object: 'chat.completion',
          created,
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: done.reply }, finish_reason: finishReason(done.finishReason) }],
          usage: usageOf(done.usage),
          cairn: { model: done.model, sources: done.sources },
        });
      }
      const turn = await converseStream(rt, scope, body.model, input, { signal: c.req.raw.signal });
      const id = `chatcmpl-${turn.sessionId.slice(4)}`;
      const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) => ({
        data: { id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra },
      });
      return sseResponse(
        c,
        async (send) => {
          await send(chunk({ role: 'assistant', content: '' }, null));
          const deltas = turn.deltas();
          let step = await deltas.next();
          for (; !step.done; step = await deltas.next()) await send(chunk({ content: step.value }, null));
          await send(chunk({}, finishReason(step.value.finishReason), { usage: usageOf(step.value.usage) }));
          await send({ data: '[DONE]' });
        },
        (error) => [{ data: { error: { message: error.message, code: error.code } } }, { data: '[DONE]' }],
      );
    },
  );
}
