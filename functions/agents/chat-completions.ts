import { checkableSchema } from '../../shared/models/response-format';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { agentAddress, converse, converseStream } from '../../shared/agents';
import { ValidationError } from '../../shared/errors';
import type { AppEnv } from '../../shared/http/context';
import { endUserTokenHeaders, turnEndUser } from '../../shared/http/end-user';
import { openAiErrorBody } from '../../shared/http/error-handler';
import { jsonContent } from '../../shared/http/openapi-schemas';
import { parseArguments } from '../../shared/models/tool-arguments';
import { addResult, assertAnswered, textOf } from './openai-turns';
import type { ChatMessage, TokenUsage, ToolCall, ToolRound } from '../../shared/models/types';
import { sseResponse } from '../../shared/http/sse';
import { setUsageHeaders } from '../../shared/http/usage-headers';
import { chatCompletion, storedAs } from './openai-shapes';
import type { Runtime } from '../../shared/runtime';

/**
 * OpenAI-compatible chat completions: `model` is a Cairn agent id and the key may come as
 * `Authorization: Bearer`, so the official `openai` client talks to Cairn agents. The client sends
 * the whole history each time, so nothing is stored in Cairn sessions unless it asks (`store: true`:
 * the exchange is kept so its reply can be rated). Every parameter accepted is
 * honoured; one Cairn cannot honour yet is a 400 naming it, never silently ignored.
 */
const part = z.looseObject({ type: z.string(), text: z.string().optional() });
const chatInput = z
  .looseObject({
    model: z.string().min(1).openapi({ description: 'A Cairn agent id', example: 'agt_01jd8x2k3m4n5p6q7r8s9t0v1w' }),
    messages: z
      .array(
        z.looseObject({
          role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
          content: z.union([z.string(), z.array(part), z.null()]).optional(),
          tool_calls: z.array(z.looseObject({ id: z.string().min(1), function: z.looseObject({ name: z.string().min(1), arguments: z.string() }) })).optional(),
          tool_call_id: z.string().min(1).optional(),
        }),
      )
      .min(1),
    stream: z.boolean().optional(),
    store: z.boolean().nullish().openapi({ description: 'Keep this exchange (question and reply) in a Cairn session, so the reply can be rated: cairn.sessionId and cairn.messageId name it' }),
    max_tokens: z.int().min(1).max(200_000).nullish().openapi({ description: 'Reply length cap in tokens (deprecated by OpenAI for max_completion_tokens)' }),
    max_completion_tokens: z.int().min(1).max(200_000).nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    stop: z.union([z.string().min(1), z.array(z.string().min(1)).max(4)]).nullish().openapi({ description: 'Up to 4 sequences the reply ends before' }),
    n: z.int().min(1).max(1, { error: 'must be 1: Cairn returns one choice per request' }).nullish(),
    response_format: z
      .discriminatedUnion('type', [
        z.looseObject({ type: z.literal('text') }),
        z.looseObject({ type: z.literal('json_object') }),
        z.looseObject({ type: z.literal('json_schema'), json_schema: z.looseObject({ name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/).default('reply'), schema: checkableSchema }) }),
      ])
      .nullish(),
    tools: z
      .array(
        z.looseObject({
          type: z.literal('function'),
          function: z.looseObject({
            name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, { error: 'must be 1–64 letters, digits, _ or -' }),
            description: z.string().max(4000).optional(),
            parameters: z.record(z.string(), z.unknown()).optional(),
          }),
        }),
      )
      .max(128)
      .nullish()
      .openapi({ description: 'Your own tools: a call comes back as tool_calls (finish_reason tool_calls) for you to run; the agent’s own tools run on the server' }),
    tool_choice: z
      .union([z.enum(['none', 'auto', 'required']), z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string().min(1) }) })])
      .nullish(),
  })
  .openapi('ChatCompletionRequest', { example: { model: 'agt_01jd8x2k3m4n5p6q7r8s9t0v1w', messages: [{ role: 'user', content: 'How long do I have to return an item?' }] } });

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
  431: jsonContent(openAiError, 'Request headers over 16 KB (local mode’s server; in AWS, API Gateway’s own header limit applies)'),
  429: jsonContent(openAiError, 'Rate limit exceeded; see Retry-After'),
  500: jsonContent(openAiError, 'Internal error'),
  503: jsonContent(openAiError, 'Briefly unavailable; retry after Retry-After seconds'),
};

/** The OpenAI-compatible routes accept the key either way. */
export const openAiSecurity: Array<Record<string, string[]>> = [{ ApiKeyAuth: [] }, { BearerAuth: [] }];

const asToolCall = (call: ToolCall) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: JSON.stringify(call.arguments ?? {}) } });

type WireMessage = { role: string; content?: unknown; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>; tool_call_id?: string };

/** OpenAI's assistant tool_calls and `tool` messages as rounds: each call with its result. */
function roundsOf(messages: WireMessage[], offset: number): ToolRound[] {
  const rounds: ToolRound[] = [];
  messages.forEach((m, i) => {
    if (m.role === 'assistant' && m.tool_calls?.length) {
      rounds.push({
        calls: m.tool_calls.map((c) => ({ id: c.id, name: c.function.name, arguments: parseArguments(c.function.arguments) })),
        results: [],
      });
    } else if (m.role === 'tool' && !addResult(rounds, m.tool_call_id, m.content)) {
      throw new ValidationError(`messages[${offset + i}].tool_call_id`, 'names no tool call of the assistant message before it');
    }
  });
  assertAnswered(rounds, 'messages', 'needs a tool message for each tool call');
  return rounds;
}

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
      request: { headers: endUserTokenHeaders, body: { content: { 'application/json': { schema: chatInput } }, required: true } },
      responses: {
        200: { description: 'An OpenAI chat.completion, or chat.completion.chunk events', content: { 'application/json': { schema: chatCompletion }, 'text/event-stream': { schema: z.string() } } },
        ...openAiErrors,
      },
    }),
    async (c) => {
      const scope = c.get('identity').scope;
      const body = c.req.valid('json');
      // The messages after the last user message are this turn's tool rounds: the assistant's
      // tool_calls and the caller's `tool` results for them.
      const lastUser = body.messages.map((m) => m.role).lastIndexOf('user');
      const toolRounds = roundsOf(body.messages.slice(lastUser + 1), lastUser + 1);
      const turns: ChatMessage[] = body.messages
        .slice(0, lastUser + 1)
        .filter((m) => (m.role === 'user' || m.role === 'assistant') && textOf(m.content ?? null))
        .map((m) => ({ role: m.role as 'user' | 'assistant', content: textOf(m.content ?? null) }));
      const last = turns.pop();
      if (!last || last.role !== 'user' || !last.content.trim()) throw new ValidationError('messages', 'must have a non-empty user message, followed only by tool calls and their results');
      const clientTools = (body.tools ?? []).map((t) => ({ name: t.function.name, description: t.function.description ?? '', parameters: t.function.parameters ?? { type: 'object', properties: {} } }));
      const choice = body.tool_choice;
      const toolChoice = choice == null || choice === 'auto' ? undefined : typeof choice === 'string' ? choice : { name: choice.function.name };
      const system = body.messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => textOf(m.content ?? null)).join('\n');
      const settings = {
        ...(body.temperature != null ? { temperature: body.temperature } : {}),
        ...((body.max_completion_tokens ?? body.max_tokens) != null ? { maxTokens: (body.max_completion_tokens ?? body.max_tokens)! } : {}),
        ...(body.top_p != null ? { topP: body.top_p } : {}),
        ...(body.stop != null ? { stop: typeof body.stop === 'string' ? [body.stop] : body.stop } : {}),
      };
      const format = body.response_format;
      const responseFormat =
        format?.type === 'json_object' ? { type: 'json_object' as const } : format?.type === 'json_schema' ? { type: 'json_schema' as const, name: format.json_schema.name, schema: format.json_schema.schema } : undefined;
      const input = { message: last.content, history: turns, instructions: system || undefined, settings, clientTools, toolRounds, toolChoice, responseFormat, store: body.store === true, ...(await turnEndUser(c, rt)) };
      const { agentId, target } = agentAddress(body.model);
      const created = Math.floor(rt.clock.now() / 1000);
      const usageOf = (u: TokenUsage) => ({ prompt_tokens: u.inputTokens, completion_tokens: u.outputTokens, total_tokens: u.inputTokens + u.outputTokens, prompt_tokens_details: { cached_tokens: u.cachedInputTokens ?? 0 } });
      if (!body.stream) {
        const { data: done, budget } = await converse(rt, scope, agentId, { ...input, target, keyId: c.get('identity').keyId }, { signal: c.req.raw.signal });
        setUsageHeaders(c, budget);
        const clientCalls = 'clientToolCalls' in done ? done.clientToolCalls : undefined;
        return c.json({
          id: `chatcmpl-${done.sessionId.slice(4)}`,
          object: 'chat.completion',
          created,
          model: body.model,
          choices: [
            clientCalls
              ? { index: 0, message: { role: 'assistant', content: done.reply || null, tool_calls: clientCalls.map(asToolCall) }, finish_reason: 'tool_calls' }
              : { index: 0, message: { role: 'assistant', content: done.reply }, finish_reason: finishReason(done.finishReason) },
          ],
          usage: usageOf(done.usage),
          cairn: { model: done.model, sources: done.sources, agentId: done.agentId, agentVersion: done.agentVersion, ...storedAs(done) },
        });
      }
      const turn = await converseStream(rt, scope, agentId, { ...input, target, keyId: c.get('identity').keyId }, { signal: c.req.raw.signal });
      setUsageHeaders(c, turn.budget);
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
          const done = step.value;
          const clientCalls = 'clientToolCalls' in done ? done.clientToolCalls : undefined;
          // As OpenAI streams a call: its id, type and name with empty arguments, then the arguments as a fragment by index.
          for (const [index, call] of (clientCalls ?? []).entries()) {
            const whole = asToolCall(call);
            await send(chunk({ tool_calls: [{ index, id: whole.id, type: whole.type, function: { name: whole.function.name, arguments: '' } }] }, null));
            await send(chunk({ tool_calls: [{ index, function: { arguments: whole.function.arguments } }] }, null));
          }
          await send(chunk({}, clientCalls ? 'tool_calls' : finishReason(done.finishReason), { usage: usageOf(done.usage), cairn: { model: done.model, agentId: done.agentId, agentVersion: done.agentVersion, ...storedAs(done) } }));
          await send({ data: '[DONE]' });
        },
        (error) => [{ data: openAiErrorBody(error) }, { data: '[DONE]' }],
      );
    },
  );
}
