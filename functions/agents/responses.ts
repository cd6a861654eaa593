import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { checkableSchema } from '../../shared/models/response-format';
import { agentAddress, converse, converseStream, type ConverseResult } from '../../shared/agents';
import { ValidationError } from '../../shared/errors';
import type { AppEnv } from '../../shared/http/context';
import { openAiErrorBody } from '../../shared/http/error-handler';
import { sseResponse } from '../../shared/http/sse';
import { setUsageHeaders } from '../../shared/http/usage-headers';
import { parseArguments } from '../../shared/models/tool-arguments';
import type { ChatMessage, TokenUsage, ToolCall, ToolRound } from '../../shared/models/types';
import type { Runtime } from '../../shared/runtime';
import { openAiErrors, openAiSecurity } from './chat-completions';
import { addResult, assertAnswered, textOf } from './openai-turns';
import { responseObject, storedAs } from './openai-shapes';
import { newId } from '../../shared/ids';

/** A response's id: its session's and its own (a later request's previous_response_id continues that session). */
const RESPONSE_ID = /^resp_([0-9a-z]{26})_([0-9a-z]{26})$/;


/**
 * OpenAI's Responses API (`POST /v1/responses`), the default of the AI SDK's OpenAI provider:
 * text and function tools, streamed or whole, over a Cairn agent (`model` is its id). Stateless
 * like chat completions: the caller sends the conversation (`previous_response_id` is refused).
 */
const textPart = z.looseObject({ type: z.string(), text: z.string().optional() });
const inputItem = z.looseObject({
  type: z.string().optional(),
  role: z.enum(['system', 'developer', 'user', 'assistant']).optional(),
  content: z.union([z.string(), z.array(textPart)]).optional(),
  call_id: z.string().optional(),
  name: z.string().optional(),
  arguments: z.string().optional(),
  output: z.unknown().optional(),
});

const responsesInput = z
  .looseObject({
    model: z.string().min(1).openapi({ description: 'A Cairn agent id' }),
    input: z.union([z.string().min(1), z.array(inputItem).min(1)]),
    instructions: z.string().max(20_000).nullish(),
    stream: z.boolean().nullish(),
    store: z.boolean().nullish().openapi({ description: 'Keep this exchange in a Cairn session so the reply can be rated (cairn.sessionId, cairn.messageId). Unlike OpenAI, Cairn stores nothing unless asked' }),
    max_output_tokens: z.int().min(1).max(200_000).nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    tools: z
      .array(
        z.looseObject({
          type: z.literal('function', { error: 'must be function: other tool types are not supported' }),
          name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
          description: z.string().max(4000).nullish(),
          parameters: z.record(z.string(), z.unknown()).nullish(),
        }),
      )
      .max(128)
      .nullish(),
    tool_choice: z.union([z.enum(['none', 'auto', 'required']), z.looseObject({ type: z.literal('function'), name: z.string().min(1) })]).nullish(),
    text: z
      .looseObject({
        format: z
          .discriminatedUnion('type', [
            z.looseObject({ type: z.literal('text') }),
            z.looseObject({ type: z.literal('json_object') }),
            z.looseObject({ type: z.literal('json_schema'), name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/).default('reply'), schema: checkableSchema }),
          ])
          .optional(),
      })
      .nullish(),
    previous_response_id: z
      .string()
      .regex(RESPONSE_ID, { error: 'must be the id of an earlier stored response (resp_…)' })
      .nullish()
      .openapi({ description: 'Continues the conversation of an earlier stored response: its session’s history goes to the model, and input holds only what is new' }),
  })
  .openapi('ResponsesRequest', { example: { model: 'agt_01jd8x2k3m4n5p6q7r8s9t0v1w', input: 'How long do I have to return an item?' } });


/** The input items as a turn: instructions, history, the last user message and the tool rounds after it. */
function turnOf(items: Array<z.infer<typeof inputItem>>) {
  const instructions: string[] = [];
  const messages: ChatMessage[] = [];
  let lastUser = -1;
  items.forEach((item, i) => {
    if (item.role === 'user') lastUser = i;
  });
  const rounds: ToolRound[] = [];
  items.forEach((item, i) => {
    if (item.role === 'system' || item.role === 'developer') instructions.push(textOf(item.content));
    else if (i <= lastUser && (item.role === 'user' || item.role === 'assistant')) {
      const text = textOf(item.content);
      if (text) messages.push({ role: item.role, content: text });
    } else if (i > lastUser && item.type === 'function_call') {
      const call = { id: item.call_id ?? '', name: item.name ?? '', arguments: parseArguments(item.arguments) };
      const open = rounds[rounds.length - 1];
      if (open && open.results.length === 0) open.calls.push(call);
      else rounds.push({ calls: [call], results: [] });
    } else if (i > lastUser && item.type === 'function_call_output' && !addResult(rounds, item.call_id, item.output)) {
      throw new ValidationError(`input[${i}].call_id`, 'names no function_call before it');
    }
  });
  assertAnswered(rounds, 'input', 'needs a function_call_output for each function_call');
  const last = messages.pop();
  if (!last || last.role !== 'user' || !last.content.trim()) throw new ValidationError('input', 'must have a non-empty user message, followed only by function calls and their outputs');
  return { message: last.content, history: messages, instructions: instructions.join('\n'), toolRounds: rounds };
}

const functionCallItem = (call: ToolCall) => ({ type: 'function_call' as const, id: `fc_${call.id}`, call_id: call.id, name: call.name, arguments: JSON.stringify(call.arguments ?? {}), status: 'completed' as const });
const usageOf = (u: TokenUsage) => ({ input_tokens: u.inputTokens, output_tokens: u.outputTokens, total_tokens: u.inputTokens + u.outputTokens, input_tokens_details: { cached_tokens: u.cachedInputTokens ?? 0 }, output_tokens_details: { reasoning_tokens: 0 } });

export function registerResponses(app: OpenAPIHono<AppEnv>, rt: Runtime) {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/responses',
      operationId: 'createResponse',
      tags: ['OpenAI-compatible'],
      summary: 'OpenAI Responses API with a Cairn agent (text and function tools)',
      security: openAiSecurity,
      request: { body: { content: { 'application/json': { schema: responsesInput } }, required: true } },
      responses: {
        200: { description: 'An OpenAI response object, or its stream of response.* events', content: { 'application/json': { schema: responseObject }, 'text/event-stream': { schema: z.string() } } },
        ...openAiErrors,
      },
    }),
    async (c) => {
      const scope = c.get('identity').scope;
      const body = c.req.valid('json');
      const turn = typeof body.input === 'string' ? { message: body.input, history: [], instructions: '', toolRounds: [] } : turnOf(body.input);
      // Continued: the session keeps the history (what input holds before its last message is added to it as said).
      const previous = body.previous_response_id ? `ses_${RESPONSE_ID.exec(body.previous_response_id)![1]}` : undefined;
      const format = body.text?.format;
      const choice = body.tool_choice;
      const input = {
        message: turn.message,
        ...(previous ? { sessionId: previous } : { history: turn.history }),
        instructions: [body.instructions ?? '', turn.instructions].filter(Boolean).join('\n') || undefined,
        toolRounds: turn.toolRounds,
        clientTools: (body.tools ?? []).map((t) => ({ name: t.name, description: t.description ?? '', parameters: t.parameters ?? { type: 'object', properties: {} } })),
        toolChoice: choice == null || choice === 'auto' ? undefined : typeof choice === 'string' ? choice : { name: choice.name },
        settings: {
          ...(body.max_output_tokens != null ? { maxTokens: body.max_output_tokens } : {}),
          ...(body.temperature != null ? { temperature: body.temperature } : {}),
          ...(body.top_p != null ? { topP: body.top_p } : {}),
        },
        // Stored with their session unless store: false, as OpenAI's Responses API stores them.
        store: body.store !== false,
        ...(format?.type === 'json_object' ? { responseFormat: { type: 'json_object' as const } } : {}),
        ...(format?.type === 'json_schema' ? { responseFormat: { type: 'json_schema' as const, name: format.name, schema: format.schema } } : {}),
      };
      const createdAt = Math.floor(rt.clock.now() / 1000);
      const { agentId, target } = agentAddress(body.model);
      if (previous && (await rt.store.sessions.recentMessages(scope, agentId, previous, 1)).length === 0) {
        throw new ValidationError('previous_response_id', 'names a response that was not stored (store: false), or whose conversation expired or was deleted');
      }
      // Known before the model answers, so a stream's first event carries the id its last does.
      const turnId = newId('request', rt.clock.now()).slice(4);
      const idOf = (sessionId: string) => `resp_${sessionId.slice(4)}_${turnId}`;
      const responseOf = (done: ConverseResult) => {
        const clientCalls = 'clientToolCalls' in done ? (done.clientToolCalls ?? []) : [];
        const message = { type: 'message' as const, id: `msg_${turnId}`, status: 'completed' as const, role: 'assistant' as const, content: [{ type: 'output_text' as const, text: done.reply, annotations: [] }] };
        const incomplete = done.finishReason === 'length';
        return {
          id: idOf(done.sessionId),
          object: 'response' as const,
          created_at: createdAt,
          status: incomplete ? ('incomplete' as const) : ('completed' as const),
          incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
          error: null,
          model: body.model,
          output: [...(done.reply ? [message] : []), ...clientCalls.map(functionCallItem)],
          usage: usageOf(done.usage),
          cairn: { model: done.model, agentVersion: done.agentVersion, ...storedAs(done) },
        };
      };
      if (!body.stream) {
        const { data: done, budget } = await converse(rt, scope, agentId, { ...input, target, keyId: c.get('identity').keyId }, { signal: c.req.raw.signal });
        setUsageHeaders(c, budget);
        return c.json(responseOf(done), 200);
      }
      const streamed = await converseStream(rt, scope, agentId, { ...input, target, keyId: c.get('identity').keyId }, { signal: c.req.raw.signal });
      setUsageHeaders(c, streamed.budget);
      const id = idOf(streamed.sessionId);
      let sequence = 0;
      const event = (type: string, data: Record<string, unknown>) => ({ event: type, data: { type, sequence_number: sequence++, ...data } });
      return sseResponse(
        c,
        async (send) => {
          await send(event('response.created', { response: { id, object: 'response', created_at: createdAt, status: 'in_progress', model: body.model, output: [] } }));
          const itemId = `msg_${turnId}`;
          let text = '';
          let opened = false;
          const deltas = streamed.deltas();
          let step = await deltas.next();
          for (; !step.done; step = await deltas.next()) {
            if (step.value.type !== 'delta') continue; // the agent's own tools run server-side
            if (!opened) {
              opened = true;
              await send(event('response.output_item.added', { output_index: 0, item: { type: 'message', id: itemId, status: 'in_progress', role: 'assistant', content: [] } }));
              await send(event('response.content_part.added', { item_id: itemId, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }));
            }
            text += step.value.text;
            await send(event('response.output_text.delta', { item_id: itemId, output_index: 0, content_index: 0, delta: step.value.text, logprobs: [] }));
          }
          const done = step.value;
          const final = responseOf(done);
          if (opened) {
            const part = { type: 'output_text', text, annotations: [] };
            await send(event('response.output_text.done', { item_id: itemId, output_index: 0, content_index: 0, text }));
            await send(event('response.content_part.done', { item_id: itemId, output_index: 0, content_index: 0, part }));
            await send(event('response.output_item.done', { output_index: 0, item: { type: 'message', id: itemId, status: 'completed', role: 'assistant', content: [part] } }));
          }
          const calls = final.output.filter((item) => item.type === 'function_call');
          for (const [i, item] of calls.entries()) {
            const outputIndex = (opened ? 1 : 0) + i;
            await send(event('response.output_item.added', { output_index: outputIndex, item: { ...item, arguments: '', status: 'in_progress' } }));
            await send(event('response.function_call_arguments.delta', { item_id: item.id, output_index: outputIndex, delta: item.arguments }));
            await send(event('response.function_call_arguments.done', { item_id: item.id, output_index: outputIndex, arguments: item.arguments }));
            await send(event('response.output_item.done', { output_index: outputIndex, item }));
          }
          await send(event(final.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: final }));
        },
        (error) => [event('error', openAiErrorBody(error).error)],
      );
    },
  );
}
