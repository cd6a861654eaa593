import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import { finishConversation, modelDeadline, prepareConversation } from '../../shared/domain/conversation';
import { AppError, ValidationError } from '../../shared/errors';
import type { AppEnv } from '../../shared/http/context';
import { commonErrors } from '../../shared/http/openapi-schemas';
import type { ChatMessage, ChatResult } from '../../shared/models/types';

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

export function registerChatCompletions(app: OpenAPIHono<AppEnv>) {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/chat/completions',
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
        .map((m) => ({ role: m.role as 'user' | 'assistant', content: textOf(m.content as never) }));
      const last = turns.pop();
      if (!last || last.role !== 'user' || !last.content.trim()) throw new ValidationError('messages', 'must end with a non-empty user message');
      const prepared = await prepareConversation(scope, body.model, { message: last.content, history: turns });
      const system = body.messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => textOf(m.content as never)).join('\n');
      if (system) prepared.request.instructions = [prepared.request.instructions, system].filter(Boolean).join('\n\n');
      const id = `chatcmpl-${prepared.sessionId.slice(4)}`;
      const created = Math.floor(Date.now() / 1000);
      if (!body.stream) {
        const result = await prepared.resolved.engine.generate(prepared.request, modelDeadline());
        const done = await finishConversation(scope, prepared, result);
        return c.json({
          id,
          object: 'chat.completion',
          created,
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: done.reply }, finish_reason: finishReason(done.finishReason) }],
          usage: { prompt_tokens: done.usage.inputTokens, completion_tokens: done.usage.outputTokens, total_tokens: done.usage.inputTokens + done.usage.outputTokens },
          cairn: { model: done.model, sources: done.sources },
        }) as never;
      }
      return streamSSE(c, async (stream) => {
        const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) =>
          stream.writeSSE({ data: JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra }) });
        try {
          await chunk({ role: 'assistant', content: '' }, null);
          const generator = prepared.resolved.engine.stream(prepared.request, modelDeadline());
          let step = await generator.next();
          while (!step.done) {
            await chunk({ content: step.value }, null);
            step = await generator.next();
          }
          const done = await finishConversation(scope, prepared, step.value as ChatResult);
          await chunk({}, finishReason(done.finishReason), {
            usage: { prompt_tokens: done.usage.inputTokens, completion_tokens: done.usage.outputTokens, total_tokens: done.usage.inputTokens + done.usage.outputTokens },
          });
        } catch (error) {
          const appError = error instanceof AppError ? error : new AppError('INTERNAL_ERROR', 'The reply failed');
          await stream.writeSSE({ data: JSON.stringify({ error: { message: appError.message, code: appError.code } }) });
        }
        await stream.writeSSE({ data: '[DONE]' });
      }) as never;
    },
  );
}
