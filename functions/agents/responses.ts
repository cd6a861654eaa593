import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { checkableSchema } from '../../shared/models/response-format';
import { agentAddress, cancelRun, continuedExchange, converse, converseStream, type ConverseResult, createRun, deleteExchange, type ExchangeAddress, followRun, getRun, type Run, runOfResponse, sessionHasTurns, storedReply, type StoredReply } from '../../shared/agents';
import { NotFoundError, ValidationError } from '../../shared/errors';
import type { Context } from 'hono';
import type { AppEnv } from '../../shared/http/context';
import { endUserTokenHeaders, turnEndUser } from '../../shared/http/end-user';
import type { TenantScope } from '../../shared/tenancy';
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

/**
 * A response's id names where it is kept: its agent, session and reply (`resp_<agent>_<session>_<reply>`,
 * each without its prefix), so a stored one is read back, continued and deleted by it, and its
 * message's id is the stored reply's (`cairn.messageId`). Ids given before carried the session and a
 * turn only: they still continue their conversation.
 */
const RESPONSE_ID = /^resp_([0-9a-z]{26})_([0-9a-z]{26})_([0-9a-z]{26})$/;
const EARLIER_RESPONSE_ID = /^resp_([0-9a-z]{26})_([0-9a-z]{26})$/;

const responseIdOf = (a: ExchangeAddress) => `resp_${a.agentId.slice(4)}_${a.sessionId.slice(4)}_${a.replyId.slice(4)}`;

/** Where a response id says its exchange is kept; undefined for an id of another shape. */
function addressOf(id: string): ExchangeAddress | undefined {
  const parts = RESPONSE_ID.exec(id);
  return parts ? { agentId: `agt_${parts[1]}`, sessionId: `ses_${parts[2]}`, replyId: `msg_${parts[3]}` } : undefined;
}

/** The session a previous response continues (an earlier id's too), checked to be the agent's own. */
function previousSession(id: string, agentId: string): { sessionId: string; address?: ExchangeAddress } {
  const address = addressOf(id);
  if (address && address.agentId !== agentId) throw new ValidationError('previous_response_id', `names a response of another agent (${address.agentId})`);
  return address ? { sessionId: address.sessionId, address } : { sessionId: `ses_${EARLIER_RESPONSE_ID.exec(id)![1]}` };
}


/**
 * OpenAI's Responses API (`/v1/responses`), the default of the AI SDK's OpenAI provider: text and
 * function tools, streamed or whole, over a Cairn agent (`model` is its id). A response is stored
 * (unless `store: false`) as an exchange of a session: `previous_response_id` continues the
 * conversation — with a new message, or with the outputs of the function calls it ended with —
 * and `GET`/`DELETE /v1/responses/{id}` read it back and delete it.
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
    background: z.boolean().nullish().openapi({ description: 'Run in the background: answered at once (status queued), retrieved, streamed (resumable with starting_after) and cancelled by id' }),
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
      .refine((id) => RESPONSE_ID.test(id) || EARLIER_RESPONSE_ID.test(id), { error: 'must be the id of an earlier stored response (resp_…)' })
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
const messageItem = (id: string, text: string) => ({ type: 'message' as const, id, status: 'completed' as const, role: 'assistant' as const, content: [{ type: 'output_text' as const, text, annotations: [] as unknown[] }] });

type ResponseStatus = 'completed' | 'incomplete' | 'in_progress' | 'queued' | 'cancelled' | 'failed';

/** A response object of what a turn gave (or a stored reply kept, or a background run so far), in OpenAI's shape. */
function responseBody(r: {
  id: string;
  createdAt: number;
  model: string;
  replyId: string;
  reply: string;
  calls: ToolCall[];
  incomplete: boolean;
  usage: TokenUsage | null;
  cairn: Record<string, unknown> & { model: string; agentVersion: number | 'draft' };
  status?: ResponseStatus;
  background?: boolean;
  error?: { code: string; message: string };
  incompleteReason?: string;
}) {
  return {
    id: r.id,
    object: 'response' as const,
    created_at: r.createdAt,
    status: r.status ?? (r.incomplete ? ('incomplete' as const) : ('completed' as const)),
    ...(r.background ? { background: true } : {}),
    incomplete_details: r.incompleteReason ? { reason: r.incompleteReason } : r.incomplete ? { reason: 'max_output_tokens' } : null,
    error: r.error ?? null,
    model: r.model,
    output: [...(r.reply ? [messageItem(r.replyId, r.reply)] : []), ...r.calls.map(functionCallItem)],
    usage: r.usage ? usageOf(r.usage) : null,
    cairn: r.cairn,
  };
}

/** A background response as its run stands: queued or in progress with no output yet, or as it ended. */
function runResponse(id: string, address: ExchangeAddress, run: Run, model: string) {
  const statuses: Record<Run['status'], ResponseStatus> = { queued: 'queued', in_progress: 'in_progress', requires_action: 'in_progress', completed: 'completed', failed: 'failed', cancelled: 'cancelled', expired: 'incomplete' };
  const status = statuses[run.status];
  return responseBody({
    id,
    createdAt: Math.floor(Date.parse(run.createdAt) / 1000),
    model,
    replyId: address.replyId,
    reply: run.status === 'completed' ? (run.reply ?? '') : '',
    calls: [],
    incomplete: false,
    usage: run.status === 'completed' ? run.usage : null,
    cairn: { model: run.model ?? '', agentVersion: run.agentVersion ?? 'draft', sessionId: run.sessionId, ...(run.messageId ? { messageId: run.messageId } : {}), runId: run.id },
    status,
    background: true,
    ...(run.status === 'failed' && run.error ? { error: run.error } : {}),
    ...(run.status === 'expired' ? { incompleteReason: 'max_duration' } : {}),
  });
}

/**
 * A background response's stream, derived from its run's events alone — so the same events always
 * get the same sequence numbers, and a stream resumed with starting_after goes on where it left:
 * created and queued, in_progress once a step ran, and at the end the reply's message and
 * response.completed (response.failed, or response.incomplete for an expired or cancelled run).
 */
function backgroundEvents(runEvents: Array<{ type: string; data: Record<string, unknown> }>, base: ReturnType<typeof runResponse>, final: ReturnType<typeof runResponse> | undefined) {
  const out: Array<{ type: string; data: Record<string, unknown> }> = [];
  const emit = (type: string, data: Record<string, unknown>) => out.push({ type, data });
  emit('response.created', { response: { ...base, status: 'queued', output: [], usage: null } });
  emit('response.queued', { response: { ...base, status: 'queued', output: [], usage: null } });
  if (runEvents.some((e) => e.type === 'step' || e.type === 'done')) emit('response.in_progress', { response: { ...base, status: 'in_progress', output: [], usage: null } });
  if (!final) return out;
  if (final.status === 'completed') {
    const item = final.output[0];
    if (item?.type === 'message') {
      const text = item.content[0]!.text;
      const part = { type: 'output_text', text: '', annotations: [] };
      emit('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
      emit('response.content_part.added', { item_id: item.id, output_index: 0, content_index: 0, part });
      emit('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta: text, logprobs: [] });
      emit('response.output_text.done', { item_id: item.id, output_index: 0, content_index: 0, text });
      emit('response.content_part.done', { item_id: item.id, output_index: 0, content_index: 0, part: { ...part, text } });
      emit('response.output_item.done', { output_index: 0, item });
    }
    emit('response.completed', { response: final });
  } else emit(final.status === 'failed' ? 'response.failed' : 'response.incomplete', { response: final });
  return out;
}

/** A stored reply as the response it was. */
const storedResponse = (id: string, address: ExchangeAddress, reply: StoredReply) =>
  responseBody({
    id,
    createdAt: Math.floor(Date.parse(reply.createdAt) / 1000),
    model: address.agentId,
    replyId: reply.id,
    reply: reply.content,
    calls: reply.clientToolCalls ?? [],
    incomplete: reply.finishReason === 'length',
    usage: reply.usage ?? { inputTokens: 0, outputTokens: 0 },
    cairn: { model: reply.model ?? '', agentVersion: reply.agentVersion ?? 'draft', sessionId: address.sessionId, messageId: reply.id },
  });

/**
 * A request whose input only answers the previous response's function calls (the standard tool
 * loop: `{previous_response_id, input: [{type: "function_call_output", call_id, output}]}`). The
 * function_call items themselves may be sent back too (they are the previous response's).
 */
function callOutputsOnly(input: z.infer<typeof responsesInput>['input']) {
  if (typeof input === 'string' || input.some((item) => item.role === 'user' || item.role === 'assistant')) return undefined;
  const outputs = input.flatMap((item, i) => (item.type === 'function_call_output' ? [{ callId: item.call_id ?? '', output: typeof item.output === 'string' ? item.output : JSON.stringify(item.output ?? ''), field: `input[${i}].call_id` }] : []));
  return outputs.length > 0 ? { outputs, instructions: input.filter((item) => item.role === 'system' || item.role === 'developer').map((item) => textOf(item.content)).join('\n') } : undefined;
}

/** How long a background response may run (then it is incomplete). */
const BACKGROUND_SECONDS = 3600;
/** A stream lasts at most this long: retrieve it again with starting_after for longer. */
const STREAM_MAX_MS = 10 * 60_000;

/** A background response's events after `startingAfter`, as its run records them, until it ends or the caller goes away. */
function backgroundStream(c: Context<AppEnv>, rt: Runtime, scope: TenantScope, run: Run, base: ReturnType<typeof runResponse>, startingAfter: number) {
  const address = addressOf(base.id)!;
  return sseResponse(
    c,
    async (send) => {
      const seen: Array<{ type: string; data: Record<string, unknown> }> = [];
      let sent = -1;
      const flush = async (final?: ReturnType<typeof runResponse>) => {
        const events = backgroundEvents(seen, base, final);
        for (let sequence = sent + 1; sequence < events.length; sequence++) {
          if (sequence > startingAfter) await send({ event: events[sequence]!.type, data: { type: events[sequence]!.type, sequence_number: sequence, ...events[sequence]!.data } });
        }
        sent = events.length - 1;
      };
      await flush();
      await followRun(
        rt,
        scope,
        run,
        0,
        async (event) => {
          if (event.event === 'ping') return;
          seen.push({ type: event.event, data: event.data });
          if (event.event !== 'done') return flush();
          const ended = await getRun(rt, scope, run.agentId, run.id);
          return flush(runResponse(base.id, address, ended, base.model));
        },
        { signal: c.req.raw.signal, maxMs: STREAM_MAX_MS },
      );
    },
    (error) => {
      const { message, param, code } = openAiErrorBody(error).error;
      return [{ event: 'error', data: { type: 'error', message, param, code } }];
    },
  );
}

export function registerResponses(app: OpenAPIHono<AppEnv>, rt: Runtime) {
  const responseParams = z.object({ responseId: z.string().openapi({ param: { name: 'responseId', in: 'path' }, example: 'resp_01jd8x2k3m4n5p6q7r8s9t0v1w_01jd8x2k3m4n5p6q7r8s9t0v1x_01jd8x2k3m4n5p6q7r8s9t0v1y' }) });
  /** The stored exchange a response id names, or the 404 a response that was never stored gets. */
  const storedAt = (responseId: string): ExchangeAddress => {
    const address = addressOf(responseId);
    if (!address) throw new NotFoundError('response', responseId);
    return address;
  };

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/responses',
      operationId: 'createResponse',
      tags: ['OpenAI-compatible'],
      summary: 'OpenAI Responses API with a Cairn agent (text and function tools)',
      security: openAiSecurity,
      request: { headers: endUserTokenHeaders, body: { content: { 'application/json': { schema: responsesInput } }, required: true } },
      responses: {
        200: { description: 'An OpenAI response object, or its stream of response.* events', content: { 'application/json': { schema: responseObject }, 'text/event-stream': { schema: z.string() } } },
        ...openAiErrors,
      },
    }),
    async (c) => {
      const scope = c.get('identity').scope;
      const body = c.req.valid('json');
      const { agentId, target } = agentAddress(body.model);
      const previous = body.previous_response_id ? previousSession(body.previous_response_id, agentId) : undefined;
      if (previous && !(await sessionHasTurns(rt, scope, agentId, previous.sessionId))) {
        throw new ValidationError('previous_response_id', 'names a response that was not stored (store: false), or whose conversation expired or was deleted');
      }
      // The reply's id is chosen now, so a stream's first event names the message its last does, and
      // the stored reply (cairn.messageId) has the same id.
      const now = rt.clock.now();
      const questionId = newId('message', now);
      const replyId = newId('message', now + 1);
      const outputsOnly = previous ? callOutputsOnly(body.input) : undefined;
      let turn: { message: string; history: ChatMessage[]; instructions: string; toolRounds: ToolRound[] };
      let continues = false;
      let continuedQuestion: string | undefined;
      if (outputsOnly) {
        if (!previous!.address) throw new ValidationError('previous_response_id', 'names a response given before function calls could be continued by id: send the conversation with the function calls instead');
        const continued = await continuedExchange(rt, scope, previous!.address, outputsOnly.outputs);
        turn = { message: continued.question.content, history: [], instructions: outputsOnly.instructions, toolRounds: continued.rounds };
        continues = true;
        continuedQuestion = continued.question.id;
      } else turn = typeof body.input === 'string' ? { message: body.input, history: [], instructions: '', toolRounds: [] } : turnOf(body.input);
      const format = body.text?.format;
      const choice = body.tool_choice;
      const input = {
        message: turn.message,
        // Continued: the session keeps the history (what input holds before its last message is added to it as said).
        ...(previous ? { sessionId: previous.sessionId } : { history: turn.history }),
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
        exchange: continues ? { questionId: continuedQuestion!, replyId, continues: true } : { questionId, replyId },
        ...(format?.type === 'json_object' ? { responseFormat: { type: 'json_object' as const } } : {}),
        ...(format?.type === 'json_schema' ? { responseFormat: { type: 'json_schema' as const, name: format.name, schema: format.schema } } : {}),
        ...(await turnEndUser(c, rt)),
      };
      const createdAt = Math.floor(now / 1000);
      if (body.background) {
        if (body.store === false) throw new ValidationError('store', 'must not be false with background: a background response is stored, to be retrieved');
        if (body.tools?.length) throw new ValidationError('tools', 'function tools are not supported with background: the agent’s own tools run in it');
        if (outputsOnly) throw new ValidationError('input', 'function call outputs continue a response in the foreground: send them without background');
        const { clientTools: _c, toolRounds: _r, store: _s, exchange: _e, ...asked } = input;
        const run = await createRun(rt, scope, agentId, { converse: { ...asked, target, keyId: c.get('identity').keyId }, maxToolSteps: 20, maxDurationSeconds: BACKGROUND_SECONDS, exchange: { questionId, replyId }, responseId: replyId });
        const address = { agentId: run.agentId, sessionId: run.sessionId, replyId };
        const response = runResponse(responseIdOf(address), address, run, body.model);
        return body.stream ? backgroundStream(c, rt, scope, run, response, -1) : c.json(response, 200);
      }
      const responseOf = (done: ConverseResult) =>
        responseBody({
          id: responseIdOf({ agentId, sessionId: done.sessionId, replyId }),
          createdAt,
          model: body.model,
          replyId,
          reply: done.reply,
          calls: 'clientToolCalls' in done ? (done.clientToolCalls ?? []) : [],
          incomplete: done.finishReason === 'length',
          usage: done.usage,
          cairn: { model: done.model, agentId: done.agentId, agentVersion: done.agentVersion, ...storedAs(done) },
        });
      if (!body.stream) {
        const { data: done, budget } = await converse(rt, scope, agentId, { ...input, target, keyId: c.get('identity').keyId }, { signal: c.req.raw.signal });
        setUsageHeaders(c, budget);
        return c.json(responseOf(done), 200);
      }
      const streamed = await converseStream(rt, scope, agentId, { ...input, target, keyId: c.get('identity').keyId }, { signal: c.req.raw.signal });
      setUsageHeaders(c, streamed.budget);
      const id = responseIdOf({ agentId, sessionId: streamed.sessionId, replyId });
      let sequence = 0;
      const event = (type: string, data: Record<string, unknown>) => ({ event: type, data: { type, sequence_number: sequence++, ...data } });
      return sseResponse(
        c,
        async (send) => {
          await send(event('response.created', { response: { id, object: 'response', created_at: createdAt, status: 'in_progress', model: body.model, output: [] } }));
          const itemId = replyId;
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

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/responses/{responseId}',
      operationId: 'getResponse',
      tags: ['OpenAI-compatible'],
      summary: 'A stored response (OpenAI Responses API)',
      description:
        'The response as it was answered, from its stored exchange, or a background response as its run stands (queued, in_progress, then as it ended); one given with `store: false`, deleted, or whose conversation expired is a 404. `stream=true` follows a background response as events, after `starting_after` (a sequence number).',
      security: openAiSecurity,
      request: { params: responseParams, query: z.object({ stream: z.enum(['true', 'false']).optional(), starting_after: z.coerce.number().int().min(-1).optional() }) },
      responses: { 200: { description: 'The response, or its events', content: { 'application/json': { schema: responseObject }, 'text/event-stream': { schema: z.string() } } }, ...openAiErrors },
    }),
    async (c) => {
      const { responseId } = c.req.valid('param');
      const { stream, starting_after: startingAfter } = c.req.valid('query');
      const scope = c.get('identity').scope;
      const address = storedAt(responseId);
      const run = await runOfResponse(rt, scope, address.agentId, address.sessionId, address.replyId);
      if (run) {
        const response = runResponse(responseId, address, run, address.agentId);
        return stream === 'true' ? backgroundStream(c, rt, scope, run, response, startingAfter ?? -1) : c.json(response, 200);
      }
      if (stream === 'true') throw new ValidationError('stream', 'is only for background responses: this one was answered whole');
      return c.json(storedResponse(responseId, address, await storedReply(rt, scope, address, responseId)), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/responses/{responseId}/cancel',
      operationId: 'cancelResponse',
      tags: ['OpenAI-compatible'],
      summary: 'Cancel a background response (OpenAI Responses API)',
      description: 'Cancels its run: nothing starts after this (a tool call already running finishes). One that has ended, or was not a background response, is a 400 as OpenAI answers.',
      security: openAiSecurity,
      request: { params: responseParams },
      responses: { 200: { description: 'The cancelled response', content: { 'application/json': { schema: responseObject } } }, ...openAiErrors },
    }),
    async (c) => {
      const { responseId } = c.req.valid('param');
      const scope = c.get('identity').scope;
      const address = storedAt(responseId);
      const run = await runOfResponse(rt, scope, address.agentId, address.sessionId, address.replyId);
      if (!run) {
        await storedReply(rt, scope, address, responseId); // a 404 when there is no such response at all
        throw new ValidationError('response_id', 'names a response that was not created in the background: only background responses can be cancelled');
      }
      if (['completed', 'failed', 'cancelled', 'expired'].includes(run.status)) throw new ValidationError('response_id', `names a background response that has already ended (${run.status})`);
      return c.json(runResponse(responseId, address, await cancelRun(rt, scope, run.agentId, run.id), address.agentId), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/responses/{responseId}',
      operationId: 'deleteResponse',
      tags: ['OpenAI-compatible'],
      summary: 'Delete a stored response (OpenAI Responses API)',
      description: 'Deletes the stored reply, and its question unless another reply answers it (the one that continued it with function call outputs).',
      security: openAiSecurity,
      request: { params: responseParams },
      responses: {
        200: { description: 'Deleted', content: { 'application/json': { schema: z.object({ id: z.string(), object: z.literal('response'), deleted: z.literal(true) }).openapi('DeletedResponse') } } },
        ...openAiErrors,
      },
    }),
    async (c) => {
      const { responseId } = c.req.valid('param');
      const scope = c.get('identity').scope;
      const address = storedAt(responseId);
      // A background response still running is cancelled first: nothing it would store comes after.
      const run = await runOfResponse(rt, scope, address.agentId, address.sessionId, address.replyId);
      if (run && !['completed', 'failed', 'cancelled', 'expired'].includes(run.status)) await cancelRun(rt, scope, run.agentId, run.id).catch(() => undefined);
      if (run && run.status !== 'completed') return c.json({ id: responseId, object: 'response' as const, deleted: true as const }, 200);
      await deleteExchange(rt, scope, address, responseId);
      return c.json({ id: responseId, object: 'response' as const, deleted: true as const }, 200);
    },
  );
}
