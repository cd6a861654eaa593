import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { createHook, deleteHook, hookInput, hookOutput, listHooks, receiveHook } from '../../shared/workflows';
import type { AppEnv } from '../../shared/http/context';
import { ok } from '../../shared/http/envelope';
import { commonErrors, envelope, jsonContent } from '../../shared/http/openapi-schemas';
import type { Runtime } from '../../shared/runtime';

const security = [{ ApiKeyAuth: [] }];
const workflowParams = z.object({ workflowId: z.string().min(1).max(200) });
const hookParams = workflowParams.extend({ hookId: z.string().min(1).max(200) });

const accepted = z.object({ executionId: z.string(), workflowId: z.string(), status: z.string() }).openapi('HookAccepted');

export function registerHookRoutes(app: OpenAPIHono<AppEnv>, rt: Runtime) {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/workflows/{workflowId}/hooks',
      operationId: 'createHook',
      tags: ['Workflows'],
      summary: 'Make an inbound hook: a URL that starts the workflow',
      description: 'The answer holds the secret (the token, or the signing secret) once; it is never shown again.',
      security,
      request: { params: workflowParams, body: { content: { 'application/json': { schema: hookInput } } } },
      responses: { 201: jsonContent(envelope(hookOutput), 'The hook, with its secret'), ...commonErrors },
    }),
    async (c) => {
      const identity = c.get('identity');
      return ok(c, await createHook(rt, identity.scope, c.req.valid('param').workflowId, c.req.valid('json'), identity), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/workflows/{workflowId}/hooks',
      operationId: 'listHooks',
      tags: ['Workflows'],
      summary: 'List the workflow’s inbound hooks (without their secrets)',
      security,
      request: { params: workflowParams },
      responses: { 200: jsonContent(envelope(z.array(hookOutput)), 'The hooks'), ...commonErrors },
    }),
    async (c) => ok(c, await listHooks(rt, c.get('identity').scope, c.req.valid('param').workflowId)),
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/workflows/{workflowId}/hooks/{hookId}',
      operationId: 'deleteHook',
      tags: ['Workflows'],
      summary: 'Delete an inbound hook: its URL stops working',
      security,
      request: { params: hookParams },
      responses: { 200: jsonContent(envelope(z.object({ id: z.string(), deleted: z.literal(true) })), 'Deleted'), ...commonErrors },
    }),
    async (c) => {
      const { workflowId, hookId } = c.req.valid('param');
      await deleteHook(rt, c.get('identity').scope, workflowId, hookId);
      return ok(c, { id: hookId, deleted: true as const });
    },
  );

  for (const path of ['/v1/hooks/{hookId}', '/v1/hooks/{hookId}/{token}'] as const) {
    app.openapi(
      createRoute({
        method: 'post',
        path,
        operationId: path.endsWith('{token}') ? 'callTokenHook' : 'callSignedHook',
        tags: ['Workflows'],
        summary: path.endsWith('{token}') ? 'Start a workflow through a token hook' : 'Start a workflow through a signed hook',
        description:
          'No API key: the token in the path, or `Cairn-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` (within 5 minutes). A JSON object body is the ' +
          'execution’s `parameters` (its string `input`, if any, the input); any other body is the input as text. 202 with the execution id.',
        security: [],
        request: {
          params: z.object({ hookId: z.string(), ...(path.endsWith('{token}') ? { token: z.string() } : {}) }),
          headers: z.object({
            'idempotency-key': z.string().min(1).max(200).optional().openapi({ description: 'A sender’s retry with the same key and body gets the first call’s execution (kept a day); the same key with another body is a 409' }),
          }),
        },
        responses: { 202: jsonContent(envelope(accepted), 'Started (or, for a retried Idempotency-Key, the execution the first call started)'), 409: jsonContent(commonErrors[400].content['application/json'].schema, 'Idempotency-Key reused with another body'), ...commonErrors },
      }),
      async (c) => {
        const idempotencyKey = c.req.valid('header')['idempotency-key'];
        const { execution, replayed } = await receiveHook(rt, c.get('identity').scope, c.get('hook')!, await c.req.text(), idempotencyKey ?? c.get('hook')!.replayKey);
        c.header('Location', `/v1/workflows/${execution.workflowId}/executions/${execution.id}`);
        if (replayed) c.header('Idempotent-Replayed', 'true');
        return ok(c, { executionId: execution.id, workflowId: execution.workflowId, status: execution.status }, 202);
      },
    );
  }
}
