import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { converse, converseStream } from '../../shared/domain/conversation';
import { ValidationError } from '../../shared/errors';
import type { AppEnv } from '../../shared/http/context';
import { openAiErrorBody } from '../../shared/http/error-handler';
import { jsonContent } from '../../shared/http/openapi-schemas';
import type { ChatMessage } from '../../shared/models/types';
import { sseResponse } from '../../shared/http/sse';
import type { Runtime } from '../../shared/runtime';

/**
 * OpenAI-compatible chat completions: `model` is a Cairn agent id and the key may come as
 * `Authorization: Bearer`, so the official `openai` client talks to Cairn agents. The client sends
 * the whole history each time, so nothing is stored in Cairn sessions. Every parameter accepted is
 * honoured; one Cairn cannot honour yet is a 400 naming it, never silently ignored.
 */
const part = z.looseObject({ type: z.string(), text: z.string().optional() });
const chatInput = z
  .looseObject({
    model: z.string().min(1).openapi({ description: 'A Cairn agent id', example: 'agt_01jd8x2k3m4n5p6q7r8s9t0v1w' }),
    messages: z
      .array(z.looseObject({ role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']), content: z.union([z.string(), z.array(part), z.null()]) }))
      .min(1),
    stream: z.boolean().optional(),
    max_tokens: z.int().min(1).max(200_000).nullish().openapi({ description: 'Reply length cap in tokens (deprecated by OpenAI for max_completion_tokens)' }),
    max_completion_tokens: z.int().min(1).max(200_000).nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    stop: z.union([z.string().min(1), z.array(z.string().min(1)).max(4)]).nullish().openapi({ description: 'Up to 4 sequences the reply ends before' }),
    n: z.int().min(1).max(1, { error: 'must be 1: Cairn returns one choice per request' }).nullish(),
    response_format: z
      .looseObject({ type: z.literal('text', { error: 'must be text: json_object and json_schema are not supported yet' }) })
      .nullish(),
    tools: z.array(z.unknown()).max(0, { error: 'are not supported yet on this endpoint: give the agent its tools instead' }).nullish(),
    tool_choice: z.union([z.literal('none'), z.literal('auto')], { error: 'must be none or auto: no tools are supported yet' }).nullish(),
  })
  .openapi('ChatCompletionRequest');

const openAiError = z
  .object({ error: z.object({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.string().nullable() }) })
  .openapi('OpenAiError');

/** The statuses of the OpenAI-compatible routes, in OpenAI's error shape. */
export const openAiErrors = {
  400: jsonContent(openAiError, 'Invalid request: param names the parameter'),
  401: jsonContent(openAiError, 'Missing, unknown or revoked key'),
  404: jsonContent(openAiError, 'No such agent (code model_not_found)'),
  413: jsonContent(openAiError, 'Body too large'),
  415: jsonContent(openAiError, 'Body is not application/json'),
  429: jsonContent(openAiError, 'Rate limit exceeded; see Retry-After'),
  500: jsonContent(openAiError, 'Internal error'),
  503: jsonContent(openAiError, 'Briefly unavailable; retry after Retry-After seconds'),
};

/** The OpenAI-compatible routes accept the key either way. */
export const openAiSecurity: Array<Record<string, string[]>> = [{ ApiKeyAuth: [] }, { BearerAuth: [] }];

const textOf = (content: string | Array<{ text?: string }> | null) =>
  typeof content === 'string' ? content : (content ?? []).map((p) => p.text ?? '').join('');

const finishReason = (r: string) => (r === 'length' || r === 'content_filter' ? r : 'stop');

export function registerChatCompletions(app: OpenAPIHono<AppEnv>, rt: Runtime) {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/chat/completions',
      operationId: 'createChatCompletion',
      tags: ['OpenAI-compatible'],
      summary: 'OpenAI-compatible chat completions with a Cairn agent',
      security: openAiSecurity,
      request: { body: { content: { 'application/json': { schema: chatInput } }, required: true } },
      responses: {
        200: { description: 'An OpenAI chat.completion, or chat.completion.chunk events', content: { 'application/json': { schema: z.unknown() }, 'text/event-stream': { schema: z.string() } } },
        ...openAiErrors,
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
      const settings = {
        ...(body.temperature != null ? { temperature: body.temperature } : {}),
        ...((body.max_completion_tokens ?? body.max_tokens) != null ? { maxTokens: (body.max_completion_tokens ?? body.max_tokens)! } : {}),
        ...(body.top_p != null ? { topP: body.top_p } : {}),
        ...(body.stop != null ? { stop: typeof body.stop === 'string' ? [body.stop] : body.stop } : {}),
      };
      const input = { message: last.content, history: turns, instructions: system || undefined, settings };
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
          // The agent's own tool calls run server-side: an OpenAI client sees the reply they lead to.
          for (; !step.done; step = await deltas.next()) if (step.value.type === 'delta') await send(chunk({ content: step.value.text }, null));
          await send(chunk({}, finishReason(step.value.finishReason), { usage: usageOf(step.value.usage) }));
          await send({ data: '[DONE]' });
        },
        (error) => [{ data: openAiErrorBody(error) }, { data: '[DONE]' }],
      );
    },
  );
}
