import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { oneRelease, releaseFields } from '../../shared/releases';
import { config } from '../../shared/config';
import { cancelExecution, rerunExecution, executeAndWait, getExecution, listExecutions, presentExecution, completeHumanStep, listWaitingExecutions, listDeliveries, webhookInput, webhookShown, followExecution } from '../../shared/workflows';
import { sseResponse } from '../../shared/http/sse';
import type { AppEnv } from '../../shared/http/context';
import { endUserTokenHeaders, requestEndUser } from '../../shared/http/end-user';
import { groupsInput } from '../../shared/identity';
import { ok, okList } from '../../shared/http/envelope';
import { commonErrors, envelope, jsonContent, listEnvelope } from '../../shared/http/openapi-schemas';
import { paginationQuery } from '../../shared/http/pagination';
import type { Runtime } from '../../shared/runtime';

const STATUSES = ['running', 'waiting', 'succeeded', 'failed', 'canceled'] as const;
const security = [{ ApiKeyAuth: [] }];
/** How long one event stream follows an execution (under API Gateway's and Lambda's limits). */
const EVENTS_MAX_MS = 10 * 60_000;
const workflowParams = z.object({ workflowId: z.string().min(1).max(200) });
const executionParams = workflowParams.extend({ executionId: z.string().min(1).max(200) });
const stepParams = executionParams.extend({ stepId: z.string().min(1).max(64) });

const executeInput = z
  .strictObject({
    input: z.string().max(100_000).default('').openapi({ example: 'I was charged twice for my order' }),
    parameters: z.record(z.string(), z.unknown()).default({}).openapi({ description: 'Available to templates as {{parameters.<name>}}' }),
    mode: z.enum(['sync', 'async']).default('sync').openapi({ description: 'sync waits up to 25 s for the result (an execution that waits for a person answers 202 at once)' }),
    webhook: webhookInput.optional().openapi({ description: 'This execution’s completion webhook, instead of the workflow’s (its secret is required)' }),
    context: z
      .strictObject({ userId: z.string().min(1).max(200).optional(), groups: groupsInput })
      .optional()
      .openapi({ description: 'The end user the execution acts for, on the caller’s word (X-End-User-Token names a verified one): templates read {{user.id}}, {{user.groups}}, {{user.verified}}; tool policies see user; agent steps run for them' }),
    ...releaseFields('Run the version this alias routes to (chosen by weight per execution)'),
  })
  .superRefine(oneRelease)
  .openapi('ExecuteRequest', { example: { input: 'I was charged twice for my order', parameters: { orderId: '1042', amount: 129.9 } } });

const rerunInput = z
  .strictObject({
    fromStep: z.string().min(1).max(64).openapi({ description: 'The step to run again; it and every step after it (by dependsOn) run, the others keep their outputs' }),
    input: z.string().max(100_000).optional().openapi({ description: 'The original’s input when not given' }),
    parameters: z.record(z.string(), z.unknown()).optional().openapi({ description: 'The original’s parameters when not given' }),
    ...releaseFields('Run the version this alias routes to; without version or alias, the definition the original ran'),
  })
  .superRefine(oneRelease)
  .openapi('RerunExecutionRequest', { example: { fromStep: 'answer' } });

const delivery = z
  .object({
    id: z.string().openapi({ description: 'Sent as Cairn-Delivery-Id: the same on every attempt', example: 'exe_01jd8x2k3m4n5p6q7r8s9t0v1w.succeeded' }),
    key: z.string(),
    event: z.enum(['succeeded', 'failed', 'canceled', 'waiting']),
    url: z.string(),
    status: z.enum(['pending', 'delivering', 'retrying', 'delivered', 'failed']),
    attempt: z.int(),
    attempts: z.array(z.object({ attempt: z.int(), at: z.string(), durationMs: z.number(), status: z.int().optional(), error: z.string().optional() })),
    createdAt: z.string(),
    deliveredAt: z.string().optional(),
  })
  .openapi('WebhookDelivery');

const completeInput = z
  .strictObject({ input: z.unknown().openapi({ description: 'The person’s answer, matching the step’s request.schema', example: { approved: true, note: 'ok' } }) })
  .openapi('CompleteStepRequest', { example: { input: { approved: true, note: 'ok' } } });

const execution = z
  .object({
    id: z.string().openapi({ example: 'exe_01jd8x2k3m4n5p6q7r8s9t0v1w' }),
    workflowId: z.string(),
    workflowVersion: z.union([z.int(), z.literal('draft')]).openapi({ description: 'The definition it ran: a version number, or draft' }),
    status: z.enum(STATUSES),
    input: z.string(),
    parameters: z.record(z.string(), z.unknown()),
    output: z.unknown().optional(),
    error: z.object({ code: z.string(), message: z.string() }).optional(),
    steps: z.array(
      z.object({
        id: z.string(),
        type: z.string(),
        status: z.string(),
        attempt: z.int(),
        startedAt: z.string().optional(),
        finishedAt: z.string().optional(),
        durationMs: z.number().optional(),
        output: z.unknown().optional(),
        error: z.object({ code: z.string(), message: z.string() }).optional(),
        request: z
          .object({ prompt: z.string(), schema: z.record(z.string(), z.unknown()), assignee: z.string().optional(), expiresAt: z.string().optional() })
          .optional()
          .openapi({ description: 'A human step’s request: what to answer, and the JSON Schema of the input' }),
        completedBy: z.enum(['api', 'timeout', 'run']).optional().openapi({ description: 'What ended a waiting step: a person (api), its timeout, or the background run it waited for' }),
        run: z.object({ agentId: z.string(), runId: z.string(), sessionId: z.string() }).optional().openapi({ description: 'A background agent step: the run it waits for (GET /v1/agents/{agentId}/runs/{runId})' }),
        map: z.object({ total: z.int(), started: z.int(), done: z.int(), failed: z.int() }).optional().openapi({ description: 'A map step’s progress' }),
        reused: z.boolean().optional().openapi({ description: 'A re-run took this step’s output from the execution it re-runs; it did not run again' }),
        logs: z.array(z.string()).optional().openapi({ description: 'A code step: the lines its code logged (console.log), at most 64 KB' }),
      }),
    ),
    usage: z.object({ inputTokens: z.number(), outputTokens: z.number() }),
    webhook: webhookShown.optional().openapi({ description: 'Where its completion webhook goes (the execute request’s, else the workflow’s); the secret is never shown' }),
    rerunOf: z.object({ executionId: z.string(), fromStep: z.string() }).optional().openapi({ description: 'The execution this one re-runs, and the step it re-ran from' }),
    user: z.object({ id: z.string(), groups: z.array(z.string()), verified: z.boolean() }).optional().openapi({ description: 'The end user it acts for (verified: from X-End-User-Token)' }),
    startedAt: z.string(),
    finishedAt: z.string().optional(),
  })
  .openapi('Execution');

export function registerExecutionRoutes(app: OpenAPIHono<AppEnv>, rt: Runtime) {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/workflows/{workflowId}/execute',
      operationId: 'executeWorkflow',
      tags: ['Workflows'],
      summary: 'Execute a workflow',
      description: 'Steps run through the workflow-steps queue. sync (default) answers 200 with the finished execution, or 202 if it takes longer than 25 s; async answers 202 at once. Poll the Location.',
      security,
      request: { params: workflowParams, headers: endUserTokenHeaders, body: { content: { 'application/json': { schema: executeInput } } } },
      responses: {
        200: jsonContent(envelope(execution), 'Finished'),
        202: jsonContent(envelope(execution), 'Running; see Location'),
        ...commonErrors,
      },
    }),
    async (c) => {
      const scope = c.get('identity').scope;
      const { workflowId } = c.req.valid('param');
      const body = c.req.valid('json');
      const { alias, version, context, ...request } = body;
      const user = await requestEndUser(c, rt, context);
      const { execution: record, finished } = await executeAndWait(rt, scope, workflowId, { ...request, target: { alias, version }, keyId: c.get('identity').keyId, ...(user ? { user } : {}) }, body.mode === 'sync' ? config.workflowSyncWaitMs : 0);
      if (finished) return ok(c, presentExecution(record));
      c.header('Location', `/v1/workflows/${workflowId}/executions/${record.id}`);
      return ok(c, presentExecution(record), 202);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/workflows/{workflowId}/executions',
      operationId: 'listExecutions',
      tags: ['Workflows'],
      summary: 'List executions, newest first',
      security,
      request: { params: workflowParams, query: paginationQuery.extend({ status: z.enum(STATUSES).optional() }) },
      responses: { 200: jsonContent(listEnvelope(execution), 'A page of executions'), ...commonErrors },
    }),
    async (c) => {
      const scope = c.get('identity').scope;
      const { workflowId } = c.req.valid('param');
      const query = c.req.valid('query');
      const page = await listExecutions(rt, scope, workflowId, query);
      return okList(c, page.items.map(presentExecution), { limit: query.limit, nextCursor: page.nextCursor });
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/workflows/{workflowId}/executions/{executionId}',
      operationId: 'getExecution',
      tags: ['Workflows'],
      summary: 'Get an execution',
      security,
      request: { params: executionParams },
      responses: { 200: jsonContent(envelope(execution), 'The execution'), ...commonErrors },
    }),
    async (c) => {
      const { workflowId, executionId } = c.req.valid('param');
      return ok(c, presentExecution(await getExecution(rt, c.get('identity').scope, workflowId, executionId)));
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/workflows/{workflowId}/executions/{executionId}/cancel',
      operationId: 'cancelExecution',
      tags: ['Workflows'],
      summary: 'Cancel a running execution',
      security,
      request: { params: executionParams },
      responses: {
        200: jsonContent(envelope(execution), 'Canceled'),
        409: jsonContent(commonErrors[400].content['application/json'].schema, 'Already finished'),
        ...commonErrors,
      },
    }),
    async (c) => {
      const scope = c.get('identity').scope;
      const { workflowId, executionId } = c.req.valid('param');
      return ok(c, presentExecution(await cancelExecution(rt, scope, workflowId, executionId)));
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/workflows/{workflowId}/executions/{executionId}/rerun',
      operationId: 'rerunExecution',
      tags: ['Workflows'],
      summary: 'Re-run a finished execution from a step',
      description:
        'A new execution (`rerunOf`) that reuses the outputs of the steps that succeeded before `fromStep` — they do not run again, so none of their effects repeat — and runs `fromStep`, every step depending on it, and any step that had not succeeded. For succeeded, failed and canceled executions (409 otherwise); a step the definition does not have is a 400 naming `fromStep`. Answers 202 with Location, as an async execute does.',
      security,
      request: { params: executionParams, body: { content: { 'application/json': { schema: rerunInput } }, required: true } },
      responses: {
        202: jsonContent(envelope(execution), 'The new execution, running; see Location'),
        409: jsonContent(commonErrors[400].content['application/json'].schema, 'The execution has not finished'),
        ...commonErrors,
      },
    }),
    async (c) => {
      const { workflowId, executionId } = c.req.valid('param');
      const { alias, version, ...body } = c.req.valid('json');
      const record = await rerunExecution(rt, c.get('identity').scope, workflowId, executionId, { ...body, target: { alias, version }, keyId: c.get('identity').keyId });
      c.header('Location', `/v1/workflows/${workflowId}/executions/${record.id}`);
      return ok(c, presentExecution(record), 202);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/workflows/{workflowId}/executions/{executionId}/steps/{stepId}/complete',
      operationId: 'completeHumanStep',
      tags: ['Workflows'],
      summary: 'Complete a waiting human step',
      description: 'The input must match the step’s `request.schema` (400 naming the field); it becomes the step’s output and the execution goes on. Once: 409 after, or when the step is not waiting.',
      security,
      request: { params: stepParams, body: { content: { 'application/json': { schema: completeInput } }, required: true } },
      responses: {
        200: jsonContent(envelope(execution), 'Completed; the execution as it is now'),
        409: jsonContent(commonErrors[400].content['application/json'].schema, 'Not waiting (already completed, timed out, or not a human step)'),
        ...commonErrors,
      },
    }),
    async (c) => {
      const { workflowId, executionId, stepId } = c.req.valid('param');
      const { input } = c.req.valid('json');
      return ok(c, presentExecution(await completeHumanStep(rt, c.get('identity').scope, workflowId, executionId, stepId, input)));
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/executions',
      operationId: 'listWaitingExecutions',
      tags: ['Workflows'],
      summary: 'List executions across workflows (those waiting for a person), newest first',
      description: '`status=waiting` (the default, and the only status listed across workflows): each execution’s waiting steps carry their `request`. Other statuses are listed per workflow.',
      security,
      request: { query: paginationQuery.extend({ status: z.literal('waiting', { error: 'only waiting executions are listed across workflows; list the others per workflow' }).default('waiting') }) },
      responses: { 200: jsonContent(listEnvelope(execution), 'A page of executions'), ...commonErrors },
    }),
    async (c) => {
      const query = c.req.valid('query');
      const page = await listWaitingExecutions(rt, c.get('identity').scope, query);
      return okList(c, page.items.map(presentExecution), { limit: query.limit, nextCursor: page.nextCursor });
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/workflows/{workflowId}/executions/{executionId}/deliveries',
      operationId: 'listWebhookDeliveries',
      tags: ['Workflows'],
      summary: 'List the execution’s completion webhook deliveries, with every attempt',
      security,
      request: { params: executionParams },
      responses: { 200: jsonContent(envelope(z.array(delivery)), 'The deliveries, oldest first'), ...commonErrors },
    }),
    async (c) => {
      const { workflowId, executionId } = c.req.valid('param');
      const scope = c.get('identity').scope;
      return ok(c, await listDeliveries(rt, scope, workflowId, executionId));
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/workflows/{workflowId}/executions/{executionId}/events',
      operationId: 'streamExecutionEvents',
      tags: ['Workflows'],
      summary: 'Follow an execution as server-sent events',
      description:
        '`snapshot` (the execution as GET shows it), then `step.started`, `step.retrying`, `step.waiting` (with the request), `step.progress` (a map’s items), ' +
        '`step.succeeded`, `step.failed`, `step.skipped`, `step.canceled` (each step left when the execution is canceled), `execution.waiting`, and `execution.finished`, after which the stream ends. A stream lasts at most ' +
        '10 minutes: follow it again for longer.',
      security,
      request: { params: executionParams },
      responses: {
        200: { description: 'The events', content: { 'text/event-stream': { schema: z.string().openapi({ example: 'event: step.succeeded\ndata: {"stepId":"classify","status":"succeeded"}\n\n' }) } } },
        ...commonErrors,
      },
    }),
    async (c) => {
      const { workflowId, executionId } = c.req.valid('param');
      const scope = c.get('identity').scope;
      const first = await getExecution(rt, scope, workflowId, executionId);
      return sseResponse(
        c,
        (send) =>
          followExecution(rt, scope, first, (e) => send(e), {
            signal: c.req.raw.signal,
            maxMs: EVENTS_MAX_MS,
            snapshot: (e) => presentExecution(e),
          }),
        (error) => [{ event: 'error', data: { code: error.code, message: error.message } }],
      );
    },
  );
}
