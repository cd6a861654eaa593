import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { finishConversation, modelDeadline, prepareConversation, type PreparedConversation } from '../../shared/domain/conversation';
import { AppError, NotFoundError } from '../../shared/errors';
import type { AppEnv } from '../../shared/http/context';
import { ok, okList } from '../../shared/http/envelope';
import { commonErrors, envelope, jsonContent, listEnvelope } from '../../shared/http/openapi-schemas';
import { paginationQuery } from '../../shared/http/pagination';
import type { ChatResult } from '../../shared/models/types';
import { deleteSession, listMessages } from '../../shared/store/sessions';
import { agents } from '../../shared/domain/agents';

const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;
const security = [{ ApiKeyAuth: [] }];

const converseInput = z
  .strictObject({
    message: z.string().trim().min(1).max(32_000).openapi({ example: 'How long do I have to return an item?' }),
    context: z
      .looseObject({
        sessionId: z.string().regex(SESSION_ID, { error: 'must be 1–128 letters, digits, _ or -' }).optional(),
        userId: z.string().min(1).max(200).optional().openapi({ description: 'Who is talking: the agent’s memory of this user spans sessions' }),
      })
      .optional()
      .openapi({ description: 'sessionId continues a conversation (a new one is made when absent); other fields are free-form' }),
    stream: z.boolean().optional().openapi({ description: 'Server-sent events (also with Accept: text/event-stream)' }),
  })
  .openapi('ConverseRequest');

const source = z.object({
  knowledgeSourceId: z.string(),
  documentId: z.string(),
  path: z.string().optional(),
  rowKey: z.string().optional(),
  chunkId: z.string(),
  score: z.number(),
  snippet: z.string(),
});

const converseResponse = z
  .object({
    agentId: z.string(),
    sessionId: z.string(),
    reply: z.string(),
    model: z.string().openapi({ example: 'local/extractive' }),
    sources: z.array(source),
    usage: z.object({ inputTokens: z.int(), outputTokens: z.int() }),
    finishReason: z.string(),
  })
  .openapi('ConverseResponse');

const message = z
  .object({ id: z.string(), role: z.enum(['user', 'assistant']), content: z.string(), createdAt: z.string(), model: z.string().optional(), sources: z.array(source).optional() })
  .openapi('SessionMessage');

const agentParams = z.object({ agentId: z.string().min(1).max(200) });
const sessionParams = agentParams.extend({ sessionId: z.string().regex(SESSION_ID) });

const wantsStream = (c: Context<AppEnv>, flag: boolean | undefined) => flag ?? (c.req.header('accept') ?? '').includes('text/event-stream');

/** Runs a prepared conversation as server-sent events: start, sources, delta…, done (or error). */
function streamConversation(c: Context<AppEnv>, scope: Parameters<typeof finishConversation>[0], prepared: PreparedConversation) {
  return streamSSE(c, async (stream) => {
    await stream.writeSSE({ event: 'start', data: JSON.stringify({ agentId: prepared.agent.id, sessionId: prepared.sessionId, model: prepared.resolved.name }) });
    await stream.writeSSE({ event: 'sources', data: JSON.stringify({ sources: prepared.sources, skippedKnowledgeSources: prepared.skipped }) });
    try {
      const generator = prepared.resolved.engine.stream(prepared.request, modelDeadline());
      let step = await generator.next();
      while (!step.done) {
        await stream.writeSSE({ event: 'delta', data: JSON.stringify({ text: step.value }) });
        step = await generator.next();
      }
      const done = await finishConversation(scope, prepared, step.value as ChatResult);
      await stream.writeSSE({ event: 'done', data: JSON.stringify({ usage: done.usage, finishReason: done.finishReason, reply: done.reply }) });
    } catch (error) {
      const appError = error instanceof AppError ? error : new AppError('INTERNAL_ERROR', 'The reply failed');
      await stream.writeSSE({ event: 'error', data: JSON.stringify({ code: appError.code, message: appError.message, details: appError.details }) });
    }
  });
}

export function registerConversationRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/agents/{agentId}/converse',
      tags: ['Agents'],
      summary: 'Converse with an agent',
      description: 'Grounded in the agent’s ready knowledge sources when it has document-search; sources not ready are skipped and listed in meta.skippedKnowledgeSources.',
      security,
      request: { params: agentParams, body: { content: { 'application/json': { schema: converseInput } }, required: true } },
      responses: {
        200: {
          description: 'The reply (JSON), or server-sent events start, sources, delta, done, error',
          content: { 'application/json': { schema: envelope(converseResponse) }, 'text/event-stream': { schema: z.string() } },
        },
        502: jsonContent(commonErrors[400].content['application/json'].schema, 'The model provider failed (details.provider, details.status)'),
        ...commonErrors,
      },
    }),
    async (c) => {
      const scope = c.get('identity').scope;
      const body = c.req.valid('json');
      const prepared = await prepareConversation(scope, c.req.valid('param').agentId, { message: body.message, sessionId: body.context?.sessionId, userId: body.context?.userId });
      if (wantsStream(c, body.stream)) return streamConversation(c, scope, prepared) as never;
      const result = await prepared.resolved.engine.generate(prepared.request, modelDeadline());
      const data = await finishConversation(scope, prepared, result);
      return ok(c, data, 200, prepared.skipped.length > 0 ? { skippedKnowledgeSources: prepared.skipped } : undefined) as never;
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/agents/{agentId}/sessions/{sessionId}/messages',
      tags: ['Agents'],
      summary: 'A session’s messages, oldest first',
      security,
      request: { params: sessionParams, query: paginationQuery },
      responses: { 200: jsonContent(listEnvelope(message), 'A page of messages'), ...commonErrors },
    }),
    async (c) => {
      const scope = c.get('identity').scope;
      const { agentId, sessionId } = c.req.valid('param');
      await agents.get(scope, agentId);
      const page = c.req.valid('query');
      const result = await listMessages(scope, agentId, sessionId, page);
      return okList(c, result.items, { limit: page.limit, nextCursor: result.nextCursor }) as never;
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/agents/{agentId}/sessions/{sessionId}',
      tags: ['Agents'],
      summary: 'Delete a session and all its messages',
      security,
      request: { params: sessionParams },
      responses: { 200: jsonContent(envelope(z.object({ id: z.string(), deleted: z.literal(true) })), 'Deleted'), ...commonErrors },
    }),
    async (c) => {
      const scope = c.get('identity').scope;
      const { agentId, sessionId } = c.req.valid('param');
      await agents.get(scope, agentId);
      if ((await deleteSession(scope, agentId, sessionId)) === 0) throw new NotFoundError('session', sessionId);
      return ok(c, { id: sessionId, deleted: true as const }) as never;
    },
  );
}
