import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { END_USER_ID, endUserErased, endUserExport, eraseEndUser, exportEndUser } from '../../shared/agents';
import type { AppEnv } from '../../shared/http/context';
import { ok } from '../../shared/http/envelope';
import { commonErrors, envelope, jsonContent } from '../../shared/http/openapi-schemas';
import type { Runtime } from '../../shared/runtime';

const params = z.object({ userId: z.string().regex(END_USER_ID, { error: 'must be an end user id (context.userId): 1–200 characters, no slash or space' }) });
const tags = ['End users'];
const security = [{ ApiKeyAuth: [] }];

/** `/v1/end-users/{userId}`: what the tenant's agents keep about one person, exported or erased on their request. */
export function registerEndUserRoutes(app: OpenAPIHono<AppEnv>, rt: Runtime) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/end-users/{userId}/export',
      operationId: 'exportEndUser',
      tags,
      summary: 'Everything kept about one end user',
      description: 'Sessions with their messages (values the guardrails tokenized shown as given) and feedback, across the tenant’s agents, and the memory graph: entities, facts with their history, episodes. Logged for audit (counts only).',
      security,
      request: { params },
      responses: { 200: jsonContent(envelope(endUserExport), 'The end user’s data'), ...commonErrors },
    }),
    async (c) => ok(c, await exportEndUser(rt, c.get('identity').scope, c.req.valid('param').userId)),
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/end-users/{userId}',
      operationId: 'eraseEndUser',
      tags,
      summary: 'Erase everything kept about one end user',
      description: 'Every session (messages, feedback, token vault, a paused turn) and the whole memory graph, its history included; answers what was removed. Logged for audit (counts only). Usage and traces hold no personal content.',
      security,
      request: { params },
      responses: { 200: jsonContent(envelope(endUserErased), 'What was removed'), ...commonErrors },
    }),
    async (c) => ok(c, await eraseEndUser(rt, c.get('identity').scope, c.req.valid('param').userId)),
  );
}
