import { responseFormatInput } from '../../shared/models/response-format';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { converse, converseSource, converseStream, type ConverseInput, deleteAgentSession, feedbackInput, forkSession, listAgentSessions, listSessionMessages, rateMessage } from '../../shared/agents';
import type { AppEnv } from '../../shared/http/context';
import { endUserTokenHeaders, turnEndUser } from '../../shared/http/end-user';
import { requiredActions } from './required-actions';
import { groupsInput } from '../../shared/identity';
import { ok, okList } from '../../shared/http/envelope';
import { commonErrors, envelope, jsonContent, listEnvelope, paginationMeta } from '../../shared/http/openapi-schemas';
import { paginationQuery } from '../../shared/http/pagination';
import { sseResponse } from '../../shared/http/sse';
import { setUsageHeaders } from '../../shared/http/usage-headers';
import { DRAFT, oneRelease, releaseFields } from '../../shared/releases';
import { SESSION_ID } from '../../shared/ids';
import type { Runtime } from '../../shared/runtime';

const security = [{ ApiKeyAuth: [] }];

const forkInput = z.strictObject({ atMessageId: z.string().min(1).max(200).openapi({ description: 'The last message the new session keeps', example: 'msg_01jd8x2k3m4n5p6q7r8s9t0v1w' }) }).openapi('ForkSessionRequest', { example: { atMessageId: 'msg_01jd8x2k3m4n5p6q7r8s9t0v1w' } });
const forkedSession = z
  .object({
    sessionId: z.string(),
    forkedFrom: z.object({ sessionId: z.string(), messageId: z.string() }),
    messages: z.int().openapi({ description: 'Messages the new session starts with' }),
  })
  .openapi('ForkedSession');

const converseInput = z
  .strictObject({
    message: z.string().trim().min(1).max(32_000).optional().openapi({ example: 'How long do I have to return an item?', description: 'Required, except when resuming a paused turn with toolApprovals' }),
    toolApprovals: z
      .array(z.strictObject({ id: z.string().min(1).max(200), approved: z.boolean(), reason: z.string().max(2000).optional() }))
      .min(1)
      .max(32)
      .optional()
      .openapi({ description: 'Resumes the session’s paused turn (status requires_action): a decision on each of its pendingToolCalls' }),
    resume: z
      .literal(true)
      .optional()
      .openapi({ description: 'Resumes the session’s paused turn once the end user has connected the accounts of its requiredActions (calls that wait for anything else still need toolApprovals)' }),
    context: z
      .looseObject({
        sessionId: z.string().regex(SESSION_ID, { error: 'must be 1–128 letters, digits, _ or -' }).optional(),
        userId: z.string().min(1).max(200).optional().openapi({ description: 'Who is talking: the agent’s memory of this user spans sessions. Taken on the caller’s word (unverified) unless X-End-User-Token names the user' }),
        groups: groupsInput.openapi({ description: 'The user’s groups, on the caller’s word (with userId): which documents they may read, what tool policies see as user.groups. A token’s groups claim replaces them' }),
      })
      .optional()
      .openapi({ description: 'sessionId continues a conversation (a new one is made when absent); other fields are free-form' }),
    stream: z.boolean().optional().openapi({ description: 'Server-sent events (also with Accept: text/event-stream)' }),
    responseFormat: responseFormatInput.optional(),
    toolChoice: z
      .union([z.enum(['auto', 'none', 'required']), z.strictObject({ name: z.string().min(1).max(128) })])
      .optional()
      .openapi({ description: 'auto (default): the model decides; none: no tool is called; required: some tool is called; {name}: that tool is called' }),
    ...releaseFields('Run the version this alias routes the session to (a session keeps its version while the alias still routes to it)'),
  })
  .superRefine((body, ctx) => {
    oneRelease(body, ctx);
    const resuming = body.toolApprovals !== undefined || body.resume === true;
    if (resuming && body.message !== undefined) ctx.addIssue({ code: 'custom', path: ['message'], message: 'must be absent when resuming a paused turn (toolApprovals, resume)' });
    if (!resuming && body.message === undefined) ctx.addIssue({ code: 'custom', path: ['message'], message: 'is required' });
    if (resuming && !body.context?.sessionId) ctx.addIssue({ code: 'custom', path: ['context', 'sessionId'], message: 'is required to resume a paused turn' });
  })
  .openapi('ConverseRequest', { example: { message: 'How long do I have to return an item?' } });

/** A cited passage, as replies show it. */
export const source = converseSource;

const toolCall = z
  .object({
    id: z.string(),
    tool: z.string(),
    arguments: z.record(z.string(), z.unknown()).optional(),
    result: z.string().optional(),
    error: z.string().optional().openapi({ description: 'The tool failed (the model was told)' }),
    durationMs: z.int(),
    child: z.object({ agentId: z.string(), sessionId: z.string() }).optional().openapi({ description: 'An agent tool’s call: the child session the asked agent answered in' }),
  })
  .openapi('ToolCall');

const handoff = z.object({ from: z.string(), to: z.string() }).openapi('Handoff', { description: 'The conversation moved from one agent to another (`agt_…[:release]`)' });

const converseResponse = z
  .object({
    agentId: z.string().openapi({ description: 'The agent that answered: the one asked, or the one it handed the conversation to' }),
    handoffs: z.array(handoff).optional().openapi({ description: 'The handoffs this turn made, in order' }),
    agentVersion: z.union([z.int(), z.literal(DRAFT)]).openapi({ description: 'The definition that answered: a version number, or draft' }),
    sessionId: z.string(),
    messageId: z.string().optional().openapi({ description: 'The stored reply’s id: rate it with POST …/sessions/{sessionId}/messages/{messageId}/feedback (absent while a turn waits for approval)' }),
    reply: z.string(),
    model: z.string().openapi({ example: 'local/extractive' }),
    sources: z.array(source).openapi({ description: 'The passages the reply cites, in order: [n] in the reply is sources[n-1]. A reply that cites nothing has none.' }),
    usage: z.object({ inputTokens: z.int(), outputTokens: z.int() }),
    finishReason: z.string(),
    toolCalls: z.array(toolCall).optional().openapi({ description: 'The agent’s tool calls on the way to the reply (SSE: tool_call and tool_result events)' }),
    output: z.unknown().optional().openapi({ description: 'With responseFormat: the reply, parsed and checked' }),
    status: z
      .enum(['completed', 'blocked', 'requires_action'])
      .openapi({ description: 'blocked: the agent’s guardrails refused the turn (the reply is their blockedMessage); requires_action: the turn is paused until a person decides on pendingToolCalls (resume with toolApprovals)' }),
    guardrails: z
      .array(
        z.object({
          type: z.enum(['pii', 'denied_topic', 'blocked_word']),
          name: z.string().optional().openapi({ description: 'The denied topic, or the blocked word' }),
          entity: z.string().optional().openapi({ description: 'The kind of personal value (email, phone, credit_card…)' }),
          action: z.enum(['tokenize', 'mask', 'block']),
          where: z.enum(['input', 'output', 'tool_result']),
          enforced: z.boolean().openapi({ description: 'false in detect mode: found and reported, nothing changed' }),
        }),
      )
      .optional()
      .openapi({ description: 'What the agent’s guardrails found in this turn (never the values themselves)' }),
    pendingToolCalls: z
      .array(
        z.object({
          id: z.string(),
          tool: z.string(),
          arguments: z.record(z.string(), z.unknown()).optional(),
          asks: z.string().optional().openapi({ description: 'A call that ran and waits for a person: what it waits on (an asked agent’s approval, a remote A2A task’s input). Approving it passes the approval on' }),
        }),
      )
      .optional()
      .openapi({ description: 'With status requires_action: the calls waiting for approval' }),
    requiredActions,
  })
  .openapi('ConverseResponse');

const messageFeedback = z
  .object({ rating: z.enum(['up', 'down']), comment: z.string().optional(), at: z.string() })
  .openapi('MessageFeedback', { description: 'What a person thought of the reply (the last rating given)' });

const message = z
  .object({
    id: z.string(),
    role: z.enum(['user', 'assistant']),
    content: z.string(),
    createdAt: z.string(),
    model: z.string().optional(),
    sources: z.array(source).optional(),
    interrupted: z.boolean().optional().openapi({ description: 'The caller went away mid-reply: the partial reply is kept' }),
    toolCalls: z.array(toolCall).optional(),
    agentVersion: z.union([z.int(), z.literal(DRAFT)]).optional().openapi({ description: 'The definition the turn ran (absent on turns stored before versions existed)' }),
    feedback: messageFeedback.optional(),
    clientToolCalls: z
      .array(z.object({ id: z.string(), name: z.string(), arguments: z.record(z.string(), z.unknown()).optional() }))
      .optional()
      .openapi({ description: 'A turn that ended calling the caller’s own tools (OpenAI-style): the calls it handed over' }),
    usage: z.object({ inputTokens: z.int(), outputTokens: z.int(), cachedInputTokens: z.int().optional() }).optional().openapi({ description: 'Assistant turns: the tokens the whole turn used' }),
    finishReason: z.string().optional().openapi({ description: 'Present when the reply did not end as the model chose (`length`: cut at the token limit)' }),
    agentId: z.string().optional().openapi({ description: 'Assistant turns answered by an agent the session was handed to (not its own): that agent, which holds the session’s next turn' }),
    handoffs: z.array(handoff).optional().openapi({ description: 'Assistant turns: the handoffs the turn made' }),
  })
  .openapi('SessionMessage');

const messagePage = z
  .object({
    data: z.array(message),
    meta: paginationMeta.extend({
      compactedThrough: z.string().optional().openapi({
        description: 'Present once the session was compacted: the last message its summary covers. Every message is still listed; turns after this one reach the model whole, those through it as `summary`.',
      }),
      summary: z.string().optional().openapi({ description: 'The summary later turns are given in place of the messages through compactedThrough' }),
      summarizedBy: z.string().optional().openapi({ description: 'The model that wrote the summary (`provider/model`), or `extractive` (the built-in engine’s)' }),
      compactedAt: z.string().optional(),
    }),
  })
  .openapi('SessionMessagePage');

const sessionSummary = z
  .object({
    sessionId: z.string(),
    userId: z.string().optional(),
    createdAt: z.string(),
    lastMessageAt: z.string(),
    messages: z.int().openapi({ description: 'Messages written (user and assistant)' }),
    parentSessionId: z.string().optional().openapi({ description: 'A child session (this agent asked by another’s `agent` tool): the asking agent’s session' }),
    parentAgentId: z.string().optional().openapi({ description: 'A child session: the agent whose tool asked' }),
  })
  .openapi('SessionSummary');

const agentParams = z.object({ agentId: z.string().min(1).max(200) });
const sessionParams = agentParams.extend({ sessionId: z.string().regex(SESSION_ID) });

const wantsStream = (c: Context<AppEnv>, flag: boolean | undefined) => flag ?? (c.req.header('accept') ?? '').includes('text/event-stream');

/** The turn as server-sent events: start, sources, delta…, done (or error). */
async function streamTurn(c: Context<AppEnv>, rt: Runtime, agentId: string, input: ConverseInput) {
  const turn = await converseStream(rt, c.get('identity').scope, agentId, { ...input, keyId: c.get('identity').keyId }, { signal: c.req.raw.signal });
  setUsageHeaders(c, turn.budget);
  return sseResponse(
    c,
    async (send) => {
      await send({ event: 'start', data: { agentId: turn.agentId, agentVersion: turn.agentVersion, sessionId: turn.sessionId, model: turn.model } });
      await send({ event: 'sources', data: { sources: turn.sources, skippedKnowledgeSources: turn.skipped } });
      const deltas = turn.deltas();
      let step = await deltas.next();
      for (; !step.done; step = await deltas.next()) {
        const event = step.value;
        if (event.type === 'delta') await send({ event: 'delta', data: { text: event.text } });
        else await send({ event: event.type, data: event.call });
      }
      const done = step.value;
      if (done.status === 'requires_action') await send({ event: 'requires_action', data: { pendingToolCalls: done.pendingToolCalls, ...('requiredActions' in done && done.requiredActions ? { requiredActions: done.requiredActions } : {}) } });
      // `model`: the one that answered (the start named the agent's own; a fallback may have answered).
      // `reply` and `sources` as stored: the passages the reply cites, its [n] renumbered to them (the deltas number them as the sources event lists them).
      await send({ event: 'done', data: { agentId: done.agentId, ...('handoffs' in done && done.handoffs ? { handoffs: done.handoffs } : {}), model: done.model, usage: done.usage, finishReason: done.finishReason, reply: done.reply, sources: done.sources, status: done.status, ...('messageId' in done && done.messageId ? { messageId: done.messageId } : {}), ...('guardrails' in done && done.guardrails ? { guardrails: done.guardrails } : {}), ...(done.toolCalls ? { toolCalls: done.toolCalls } : {}) } });
    },
    (error) => [{ event: 'error', data: { code: error.code, message: error.message, details: error.details } }],
  );
}

export function registerConversationRoutes(app: OpenAPIHono<AppEnv>, rt: Runtime) {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/agents/{agentId}/converse',
      operationId: 'converseWithAgent',
      tags: ['Agents'],
      summary: 'Converse with an agent',
      description: 'Grounded in the agent’s ready knowledge sources when it has document-search; sources not ready are skipped and listed in meta.skippedKnowledgeSources.',
      security,
      request: { params: agentParams, headers: endUserTokenHeaders, body: { content: { 'application/json': { schema: converseInput } }, required: true } },
      responses: {
        200: {
          description: 'The reply (JSON), or server-sent events start, sources (the passages the model is given, numbered as the deltas cite them), tool_call, tool_result, delta, done (the reply as stored, with the sources it cites renumbered), error',
          content: { 'application/json': { schema: envelope(converseResponse) }, 'text/event-stream': { schema: z.string() } },
        },
        409: jsonContent(commonErrors[400].content['application/json'].schema, 'A turn of the session waits for tool approval (details.pendingToolCalls) or for the end user to connect an account (details.requiredActions), or there is none to resume'),
        422: jsonContent(commonErrors[400].content['application/json'].schema, 'The agent has tools its model cannot call in Cairn yet (details.model)'),
        502: jsonContent(commonErrors[400].content['application/json'].schema, 'The model provider failed (details.provider, details.status)'),
        ...commonErrors,
      },
    }),
    async (c) => {
      const scope = c.get('identity').scope;
      const body = c.req.valid('json');
      const { agentId } = c.req.valid('param');
      const input = {
        message: body.message ?? '',
        sessionId: body.context?.sessionId,
        ...(await turnEndUser(c, rt, { userId: body.context?.userId, groups: body.context?.groups })),
        toolApprovals: body.toolApprovals,
        ...(body.resume ? { resume: true } : {}),
        responseFormat: body.responseFormat,
        ...(body.toolChoice && body.toolChoice !== 'auto' ? { toolChoice: body.toolChoice } : {}),
        target: { alias: body.alias, version: body.version },
      };
      if (wantsStream(c, body.stream)) return streamTurn(c, rt, agentId, input);
      const { data, skipped, budget } = await converse(rt, scope, agentId, { ...input, keyId: c.get('identity').keyId }, { signal: c.req.raw.signal });
      setUsageHeaders(c, budget);
      return ok(c, data, 200, skipped.length > 0 ? { skippedKnowledgeSources: skipped } : undefined);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/agents/{agentId}/sessions',
      operationId: 'listSessions',
      tags: ['Agents'],
      summary: 'An agent’s sessions, newest first',
      description: 'Sessions expire SESSION_TTL_DAYS after their last message.',
      security,
      request: { params: agentParams, query: paginationQuery },
      responses: { 200: jsonContent(listEnvelope(sessionSummary), 'A page of sessions'), ...commonErrors },
    }),
    async (c) => {
      const { agentId } = c.req.valid('param');
      const page = c.req.valid('query');
      const result = await listAgentSessions(rt, c.get('identity').scope, agentId, page);
      return okList(c, result.items, { limit: page.limit, nextCursor: result.nextCursor });
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/agents/{agentId}/sessions/{sessionId}/messages',
      operationId: 'listSessionMessages',
      tags: ['Agents'],
      summary: 'A session’s messages, oldest first',
      security,
      request: { params: sessionParams, query: paginationQuery },
      responses: { 200: jsonContent(messagePage, 'A page of messages'), ...commonErrors },
    }),
    async (c) => {
      const scope = c.get('identity').scope;
      const { agentId, sessionId } = c.req.valid('param');
      const page = c.req.valid('query');
      const result = await listSessionMessages(rt, scope, agentId, sessionId, page);
      return okList(c, result.items, { limit: page.limit, nextCursor: result.nextCursor }, result.compaction ?? {});
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/agents/{agentId}/sessions/{sessionId}/messages/{messageId}/feedback',
      operationId: 'rateMessage',
      tags: ['Agents'],
      summary: 'Rate an agent’s reply up or down',
      description:
        'Kept with the message (the messages API shows it); a second rating replaces the first. Counted in usage (feedbackUp, feedbackDown). POST /v1/eval-datasets/{id}/cases with fromMessage turns the reply and its question into a case. 400 for a user message; 404 for an unknown agent, session or message.',
      security,
      request: { params: sessionParams.extend({ messageId: z.string().min(1).max(200) }), body: { content: { 'application/json': { schema: feedbackInput } }, required: true } },
      responses: { 200: jsonContent(envelope(message), 'The message, with its feedback'), ...commonErrors },
    }),
    async (c) => {
      const identity = c.get('identity');
      return ok(c, await rateMessage(rt, identity.scope, c.req.valid('param'), c.req.valid('json'), identity.keyId));
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/agents/{agentId}/sessions/{sessionId}/fork',
      operationId: 'forkSession',
      tags: ['Agents'],
      summary: 'Fork a session at a message',
      description:
        'A new session holding this session’s messages up to and including `atMessageId` (same ids, ratings left behind), its guardrails vault sealed again for the new session, its summary when it covers only those messages, and — for a session without a userId — what the agent remembered in it up to then. Converse with the new sessionId to go on from there; the original is unchanged. A message of another session is a 404.',
      security,
      request: { params: sessionParams, body: { content: { 'application/json': { schema: forkInput } }, required: true } },
      responses: { 201: jsonContent(envelope(forkedSession), 'The new session; Location lists its messages'), ...commonErrors },
    }),
    async (c) => {
      const { agentId, sessionId } = c.req.valid('param');
      const forked = await forkSession(rt, c.get('identity').scope, agentId, sessionId, c.req.valid('json').atMessageId);
      c.header('Location', `/v1/agents/${agentId}/sessions/${forked.sessionId}/messages`);
      return ok(c, forked, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/agents/{agentId}/sessions/{sessionId}',
      operationId: 'deleteSession',
      tags: ['Agents'],
      summary: 'Delete a session and all its messages',
      security,
      request: { params: sessionParams },
      responses: { 200: jsonContent(envelope(z.object({ id: z.string(), deleted: z.literal(true) })), 'Deleted'), ...commonErrors },
    }),
    async (c) => {
      const scope = c.get('identity').scope;
      const { agentId, sessionId } = c.req.valid('param');
      await deleteAgentSession(rt, scope, agentId, sessionId);
      return ok(c, { id: sessionId, deleted: true as const });
    },
  );
}
