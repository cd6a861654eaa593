import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { END_USER_ID, endUserErased, endUserExport, eraseEndUser, exportEndUser } from '../../shared/agents';
import type { AppEnv } from '../../shared/http/context';
import { ok, okList } from '../../shared/http/envelope';
import { endUserTokenHeaders, requestEndUser } from '../../shared/http/end-user';
import { oauthCallbackUrl } from '../../shared/http/public-url';
import { connectionShown, disconnect, listConnections, PROVIDER_NAME, scopesInput, showConnection, startAuthorization } from '../../shared/identity';
import { NotFoundError } from '../../shared/errors';
import { httpUrl } from '../../shared/schema-helpers';
import { commonErrors, envelope, jsonContent, listEnvelope } from '../../shared/http/openapi-schemas';
import type { Runtime } from '../../shared/runtime';

const params = z.object({ userId: z.string().regex(END_USER_ID, { error: 'must be an end user id (context.userId): 1–200 characters, no slash or space' }) });
const tags = ['End users'];
const security = [{ ApiKeyAuth: [] }];

/** `/v1/end-users/{userId}`: what the tenant's agents keep about one person, exported or erased on their request. */
export function registerEndUserRoutes(app: OpenAPIHono<AppEnv>, rt: Runtime) {
  const connectionParams = params.extend({ provider: z.string().regex(PROVIDER_NAME, { error: 'must be a provider name' }) });
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/end-users/{userId}/connections',
      operationId: 'listEndUserConnections',
      tags,
      summary: 'The accounts an end user connected (never tokens)',
      security,
      request: { params },
      responses: { 200: jsonContent(listEnvelope(connectionShown), 'Their connections, by provider'), ...commonErrors },
    }),
    async (c) => {
      const all = (await listConnections(rt, c.get('identity').scope, c.req.valid('param').userId)).map(showConnection);
      return okList(c, all, { limit: all.length, nextCursor: null });
    },
  );
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/end-users/{userId}/connections/{provider}',
      operationId: 'startEndUserConnection',
      tags,
      summary: 'Start connecting an end user’s account: the URL to send them to',
      description:
        'The provider’s authorization URL (authorization code with PKCE S256, a single-use state valid ten minutes). After signing in and consenting, the provider sends the end user to /v1/oauth/callback, which stores their tokens sealed. With X-End-User-Token, the token’s user must be the path’s.',
      security,
      request: {
        params: connectionParams,
        headers: endUserTokenHeaders,
        body: {
          content: {
            'application/json': {
              schema: z
                .strictObject({
                  scopes: scopesInput.optional().openapi({ description: 'Asked for beside the provider’s own scopes' }),
                  redirectAfter: httpUrl().optional().openapi({ description: 'Where the callback sends the browser once done (with connected=<provider> or error=<code>), instead of its own page' }),
                })
                .openapi('StartConnectionRequest', { example: { redirectAfter: 'https://app.example.com/settings/accounts' } }),
            },
          },
        },
      },
      responses: { 201: jsonContent(envelope(z.object({ provider: z.string(), url: z.string(), expiresAt: z.string() }).openapi('ConnectionStart')), 'Send the end user to url'), ...commonErrors },
    }),
    async (c) => {
      const { userId, provider } = c.req.valid('param');
      await requestEndUser(c, rt, { userId });
      const body = c.req.valid('json') ?? {};
      const started = await startAuthorization(rt, c.get('identity').scope, { provider, userId, ...(body.scopes ? { scopes: body.scopes } : {}), ...(body.redirectAfter ? { redirectAfter: body.redirectAfter } : {}), redirectUri: oauthCallbackUrl(c) });
      return ok(c, { provider, ...started }, 201);
    },
  );
  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/end-users/{userId}/connections/{provider}',
      operationId: 'deleteEndUserConnection',
      tags,
      summary: 'Disconnect an end user’s account',
      description: 'Its tokens are deleted, and revoked at the provider when it has a revocation endpoint (`revoked`).',
      security,
      request: { params: connectionParams },
      responses: { 200: jsonContent(envelope(z.object({ provider: z.string(), removed: z.boolean(), revoked: z.boolean() })), 'Disconnected'), ...commonErrors },
    }),
    async (c) => {
      const { userId, provider } = c.req.valid('param');
      const done = await disconnect(rt, c.get('identity').scope, userId, provider);
      if (!done.removed) throw new NotFoundError('connection', `${userId}/${provider}`);
      return ok(c, { provider, ...done });
    },
  );

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
