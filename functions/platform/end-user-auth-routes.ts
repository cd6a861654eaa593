import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../shared/http/context';
import { ok } from '../../shared/http/envelope';
import { envelope, jsonContent } from '../../shared/http/openapi-schemas';
import { endUserAuthInput, endUserAuthOf, endUserAuthShown, removeEndUserAuth, setEndUserAuth, showEndUserAuth } from '../../shared/identity';
import type { Runtime } from '../../shared/runtime';
import { platformErrors, tokenSecurity } from './openapi';

const shown = z.object({ endUserAuth: endUserAuthShown.nullable().openapi({ description: 'The identity provider (null: none; `context.userId` is taken on the caller’s word)' }) }).openapi('TenantEndUserAuth');
const tags = ['End-user identity'];

/** `/platform/end-user-auth`: whose tokens (`X-End-User-Token`) name the token's tenant's end users. */
export function registerEndUserAuthRoutes(app: OpenAPIHono<AppEnv>, rt: Runtime) {
  app.openapi(
    createRoute({ method: 'get', path: '/platform/end-user-auth', operationId: 'getEndUserAuth', tags, summary: 'The end users’ identity provider (never its secret)', security: tokenSecurity, responses: { 200: jsonContent(envelope(shown), 'The settings'), ...platformErrors } }),
    async (c) => {
      const stored = await endUserAuthOf(rt, c.get('platformToken').scope);
      return ok(c, { endUserAuth: stored ? showEndUserAuth(stored) : null });
    },
  );
  app.openapi(
    createRoute({
      method: 'put',
      path: '/platform/end-user-auth',
      operationId: 'setEndUserAuth',
      tags,
      summary: 'Sets the end users’ identity provider',
      description:
        'Callers then send an end user’s token as `X-End-User-Token` (converse, runs, responses, chat completions, search, MCP, A2A): Cairn verifies its signature, `iss`, `aud`, `exp` and `nbf` with these keys and acts for the user it names, with their groups. Other instances see a change within 30 s.',
      security: tokenSecurity,
      request: { body: { content: { 'application/json': { schema: endUserAuthInput } }, required: true } },
      responses: { 200: jsonContent(envelope(shown), 'The settings now'), ...platformErrors },
    }),
    async (c) => ok(c, { endUserAuth: showEndUserAuth(await setEndUserAuth(rt, c.get('platformToken').scope, c.req.valid('json'))) }),
  );
  app.openapi(
    createRoute({
      method: 'delete',
      path: '/platform/end-user-auth',
      operationId: 'removeEndUserAuth',
      tags,
      summary: 'Removes the end users’ identity provider',
      description: 'Tokens are refused from then on (401, reason not_configured); `context.userId` is taken on the caller’s word again.',
      security: tokenSecurity,
      responses: { 200: jsonContent(envelope(z.object({ removed: z.boolean() })), 'Whether there was one'), ...platformErrors },
    }),
    async (c) => ok(c, { removed: await removeEndUserAuth(rt, c.get('platformToken').scope) }),
  );
}
