import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { approveRun, cancelRun, createRun, rerunRun, followRun, getRun, lastUserMessage, listRuns, presentRun, RUN_STATUSES, runSettings, runSteps } from '../../shared/agents';
import type { AppEnv } from '../../shared/http/context';
import { endUserTokenHeaders, turnEndUser } from '../../shared/http/end-user';
import { requiredActions } from './required-actions';
import { groupsInput } from '../../shared/identity';
import { ok, okList } from '../../shared/http/envelope';
import { commonErrors, envelope, errorResponse, jsonContent, listEnvelope, locationHeader } from '../../shared/http/openapi-schemas';
import { paginationQuery } from '../../shared/http/pagination';
import { sseResponse } from '../../shared/http/sse';
import { responseFormatInput } from '../../shared/models/response-format';
import { DRAFT, oneRelease, releaseFields } from '../../shared/releases';
import { SESSION_ID } from '../../shared/ids';
import type { Runtime } from '../../shared/runtime';
import { source } from './conversation-routes';

const security = [{ ApiKeyAuth: [] }];
const tags = ['Runs'];
/** A stream lasts at most this long: follow it again (with Last-Event-ID) for longer. */
const EVENTS_MAX_MS = 10 * 60_000;

const chatMessage = z.strictObject({ role: z.enum(['user', 'assistant']), content: z.string().min(1).max(32_000) });

const runInput = z
  .strictObject({
    message: z.string().trim().min(1).max(32_000).optional().openapi({ example: 'Reconcile the open orders of customer C-1042 against the invoices.' }),
    messages: z.array(chatMessage).min(1).max(200).optional().openapi({ description: 'The conversation so far, ending with the user’s message (instead of message; not with context.sessionId)' }),
    context: z
      .looseObject({
        sessionId: z.string().regex(SESSION_ID, { error: 'must be 1–128 letters, digits, _ or -' }).optional(),
        userId: z.string().min(1).max(200).optional().openapi({ description: 'Who the run is for, on the caller’s word unless X-End-User-Token names the user' }),
        groups: groupsInput.openapi({ description: 'The user’s groups, on the caller’s word (with userId); a token’s groups claim replaces them' }),
      })
      .optional(),
    responseFormat: responseFormatInput.optional(),
    toolChoice: z.union([z.enum(['auto', 'none', 'required']), z.strictObject({ name: z.string().min(1).max(128) })]).optional(),
    ...releaseFields('Run the version this alias routes the session to'),
    ...runSettings,
  })
  .superRefine((body, ctx) => {
    oneRelease(body, ctx);
    if ((body.message === undefined) === (body.messages === undefined)) ctx.addIssue({ code: 'custom', path: ['message'], message: 'give message or messages: exactly one' });
    if (body.messages && body.context?.sessionId) ctx.addIssue({ code: 'custom', path: ['messages'], message: 'must be absent with context.sessionId: the session holds the conversation' });
  })
  .openapi('RunRequest', { example: { message: 'Reconcile the open orders of customer C-1042 against the invoices.', maxToolSteps: 40 } });

const runStep = z
  .object({
    step: z.int().openapi({ description: 'The model step it belongs to (a model call, then the round of tool calls it asked for)' }),
    kind: z.enum(['model', 'tool']),
    model: z.string().optional().openapi({ description: 'A model step: the model that answered' }),
    usage: z.object({ inputTokens: z.int(), outputTokens: z.int() }).optional(),
    id: z.string().optional().openapi({ description: 'A tool step: the call’s id' }),
    tool: z.string().optional(),
    arguments: z.record(z.string(), z.unknown()).optional(),
    result: z.string().optional(),
    error: z.string().optional(),
    durationMs: z.int(),
    reused: z.boolean().optional().openapi({ description: 'A re-run took this step from the run it re-runs; it was not done again' }),
  })
  .openapi('RunStep');

const run = z
  .object({
    id: z.string().openapi({ example: 'run_01jd8x2k3m4n5p6q7r8s9t0v1w' }),
    agentId: z.string(),
    sessionId: z.string(),
    status: z.enum(RUN_STATUSES),
    message: z.string(),
    userId: z.string().optional(),
    maxToolSteps: z.int(),
    maxTokens: z.int().optional(),
    step: z.int().openapi({ description: 'Model steps taken' }),
    agentVersion: z.union([z.int(), z.literal(DRAFT)]).optional(),
    reply: z.string().optional(),
    sources: z.array(source).optional(),
    output: z.unknown().optional(),
    usage: z.object({ inputTokens: z.int(), outputTokens: z.int(), cachedInputTokens: z.int().optional() }),
    model: z.string().optional().openapi({ description: 'The model that gave the final answer' }),
    messageId: z.string().optional().openapi({ description: 'The stored reply in the session' }),
    error: z.object({ code: z.string(), message: z.string() }).optional(),
    pendingToolCalls: z.array(z.object({ id: z.string(), tool: z.string(), arguments: z.record(z.string(), z.unknown()).optional() })).optional().openapi({ description: 'requires_action: the calls a person decides on (POST …/approvals)' }),
    requiredActions: requiredActions.openapi({ description: 'requires_action: accounts the end user must connect first (the run goes on by itself once they have)' }),
    webhook: z.object({ url: z.string(), configured: z.literal(true) }).optional(),
    steps: z.array(runStep).optional().openapi({ description: 'GET of one run: each model call and each tool call, in order' }),
    createdAt: z.string(),
    updatedAt: z.string(),
    startedAt: z.string().optional(),
    finishedAt: z.string().optional(),
    expiresAt: z.string().openapi({ description: 'When the run expires if it has not finished (maxDurationSeconds after it was created)' }),
    rerunOf: z.object({ runId: z.string(), fromStep: z.int() }).optional().openapi({ description: 'The run this one re-runs, and the model step it re-ran from' }),
  })
  .openapi('Run');

const rerunInput = z
  .strictObject({ fromStep: z.int().min(0).max(1000).openapi({ description: 'The model step to take again: the rounds of tool calls before it keep their results' }) })
  .openapi('RerunRunRequest', { example: { fromStep: 2 } });

const agentParams = z.object({ agentId: z.string().min(1).max(200) });
const runParams = agentParams.extend({ runId: z.string().min(1).max(100) });
const conflict = jsonContent(errorResponse, 'The run has ended, or is not waiting for approval (details.status)');

export function registerRunRoutes(app: OpenAPIHono<AppEnv>, rt: Runtime) {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/agents/{agentId}/runs',
      operationId: 'createRun',
      tags,
      summary: 'Start a background run of an agent',
      description:
        'Converse’s body, run in the background: each model call and each round of tool calls is a step on the steps queue, its outcome recorded before the next, so the run outlives any request or process. Answers 202 at once; follow it with GET, its events, or its webhook.',
      security,
      request: { params: agentParams, headers: endUserTokenHeaders, body: { content: { 'application/json': { schema: runInput } }, required: true } },
      responses: { 202: { ...jsonContent(envelope(run), 'Queued'), headers: { Location: locationHeader } }, ...commonErrors },
    }),
    async (c) => {
      const scope = c.get('identity').scope;
      const body = c.req.valid('json');
      const { agentId } = c.req.valid('param');
      const said = body.messages ? lastUserMessage(body.messages) : { message: body.message!, history: undefined };
      const created = await createRun(rt, scope, agentId, {
        converse: {
          message: said.message,
          ...(said.history ? { history: said.history } : {}),
          sessionId: body.context?.sessionId,
          ...(await turnEndUser(c, rt, { userId: body.context?.userId, groups: body.context?.groups })),
          responseFormat: body.responseFormat,
          ...(body.toolChoice && body.toolChoice !== 'auto' ? { toolChoice: body.toolChoice } : {}),
          target: { alias: body.alias, version: body.version },
          keyId: c.get('identity').keyId,
        },
        maxToolSteps: body.maxToolSteps,
        maxDurationSeconds: body.maxDurationSeconds,
        ...(body.budget ? { maxTokens: body.budget.maxTokens } : {}),
        ...(body.webhook ? { webhook: body.webhook } : {}),
      });
      c.header('Location', `/v1/agents/${created.agentId}/runs/${created.id}`);
      return ok(c, presentRun(created), 202);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/agents/{agentId}/runs',
      operationId: 'listRuns',
      tags,
      summary: 'List an agent’s runs, newest first',
      security,
      request: { params: agentParams, query: paginationQuery.extend({ status: z.enum(RUN_STATUSES).optional(), sessionId: z.string().regex(SESSION_ID).optional() }) },
      responses: { 200: jsonContent(listEnvelope(run), 'The runs'), ...commonErrors },
    }),
    async (c) => {
      const { limit, cursor, status, sessionId } = c.req.valid('query');
      const page = await listRuns(rt, c.get('identity').scope, c.req.valid('param').agentId, { limit, cursor, status, sessionId });
      return okList(c, page.items.map(presentRun), { limit, nextCursor: page.nextCursor });
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/agents/{agentId}/runs/{runId}',
      operationId: 'getRun',
      tags,
      summary: 'A run: its status, steps, reply, usage',
      security,
      request: { params: runParams },
      responses: { 200: jsonContent(envelope(run), 'The run'), ...commonErrors },
    }),
    async (c) => {
      const { agentId, runId } = c.req.valid('param');
      const scope = c.get('identity').scope;
      const found = await getRun(rt, scope, agentId, runId);
      return ok(c, { ...presentRun(found), steps: (await runSteps(rt, scope, found)) as Array<z.infer<typeof runStep>> });
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/agents/{agentId}/runs/{runId}/cancel',
      operationId: 'cancelRun',
      tags,
      summary: 'Cancel a run',
      description: 'Nothing starts after this; a tool call already running finishes, and its outcome is not recorded. A run that has ended is a 409.',
      security,
      request: { params: runParams },
      responses: { 200: jsonContent(envelope(run), 'Cancelled'), 409: conflict, ...commonErrors },
    }),
    async (c) => {
      const { agentId, runId } = c.req.valid('param');
      return ok(c, presentRun(await cancelRun(rt, c.get('identity').scope, agentId, runId)));
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/agents/{agentId}/runs/{runId}/rerun',
      operationId: 'rerunRun',
      tags,
      summary: 'Re-run an ended run from a model step',
      description:
        'A new run (`rerunOf`) that keeps the rounds of tool calls before model step `fromStep` — listed as reused steps, not run again, so none of their effects repeat — and asks the model again from there, with the same limits and webhook. Its exchange goes to a new session holding the original’s history before the run’s question. For completed, failed, cancelled and expired runs (409 otherwise); a step past the rounds the run recorded is a 400 naming `fromStep`.',
      security,
      request: { params: runParams, body: { content: { 'application/json': { schema: rerunInput } }, required: true } },
      responses: { 202: { ...jsonContent(envelope(run), 'Queued'), headers: { Location: locationHeader } }, 409: conflict, ...commonErrors },
    }),
    async (c) => {
      const { agentId, runId } = c.req.valid('param');
      const rerun = await rerunRun(rt, c.get('identity').scope, agentId, runId, { fromStep: c.req.valid('json').fromStep, keyId: c.get('identity').keyId });
      c.header('Location', `/v1/agents/${rerun.agentId}/runs/${rerun.id}`);
      return ok(c, presentRun(rerun), 202);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/agents/{agentId}/runs/{runId}/approvals',
      operationId: 'approveRun',
      tags,
      summary: 'Decide on the tool calls a run waits on',
      security,
      request: {
        params: runParams,
        body: {
          content: {
            'application/json': {
              schema: z
                .strictObject({ toolApprovals: z.array(z.strictObject({ id: z.string().min(1).max(200), approved: z.boolean(), reason: z.string().max(2000).optional() })).min(1).max(32) })
                .openapi('RunApprovals', { example: { toolApprovals: [{ id: 'call_0', approved: true }] } }),
            },
          },
          required: true,
        },
      },
      responses: { 200: jsonContent(envelope(run), 'Resumed'), 409: conflict, ...commonErrors },
    }),
    async (c) => {
      const { agentId, runId } = c.req.valid('param');
      return ok(c, presentRun(await approveRun(rt, c.get('identity').scope, agentId, runId, c.req.valid('json').toolApprovals)));
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/agents/{agentId}/runs/{runId}/events',
      operationId: 'followRun',
      tags,
      summary: 'Follow a run as server-sent events',
      description:
        'Each event has an id (its number): `status`, `step` (a model call or a tool call), `delta` (a model step’s text), `requires_action`, `done` (the run ended; the stream closes). Reconnect with Last-Event-ID to go on after the last event seen, nothing lost or repeated; a finished run replays its events. A stream lasts at most 10 minutes.',
      security,
      request: { params: runParams, headers: z.object({ 'last-event-id': z.string().optional() }) },
      responses: { 200: { description: 'The events', content: { 'text/event-stream': { schema: z.string() } } }, ...commonErrors },
    }),
    async (c) => {
      const { agentId, runId } = c.req.valid('param');
      const scope = c.get('identity').scope;
      const found = await getRun(rt, scope, agentId, runId);
      // A Last-Event-ID that is not an event number is ignored: the stream starts from the first.
      const last = Number(c.req.header('last-event-id'));
      const after = Number.isInteger(last) && last >= 0 ? last : 0;
      return sseResponse(
        c,
        (send) => followRun(rt, scope, found, after, (e) => send(e), { signal: c.req.raw.signal, maxMs: EVENTS_MAX_MS }),
        (error) => [{ event: 'error', data: { code: error.code, message: error.message } }],
      );
    },
  );
}
