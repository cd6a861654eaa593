import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { ValidationError } from '../../shared/errors';
import type { AppEnv } from '../../shared/http/context';
import { ok, okList } from '../../shared/http/envelope';
import { commonErrors, envelope, jsonContent, listEnvelope } from '../../shared/http/openapi-schemas';
import { completeAuthorization, deleteProvider, getProvider, listProviders, oauthProviderInput, oauthProviderReplacement, oauthProviderShown, PROVIDER_NAME, putProvider, showProvider } from '../../shared/identity';
import type { Runtime } from '../../shared/runtime';
import { resumeAuthorizedRun } from '../../shared/agents';
import { errorFields, log } from '../../shared/log';

const tags = ['End-user connections'];
const security = [{ ApiKeyAuth: [] }];
const params = z.object({ name: z.string().regex(PROVIDER_NAME, { error: 'must be a provider name (lower-case letters, digits, _ or -)' }) });

const escape = (text: string) => text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
/** The small page the end user's browser lands on: nothing from the provider but its error code, escaped. */
const page = (c: Context<AppEnv>, status: 200 | 400, title: string, text: string) =>
  c.html(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escape(title)}</title></head><body style="font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem"><h1>${escape(title)}</h1><p>${escape(text)}</p></body></html>`,
    status,
    { 'cache-control': 'no-store', 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'", 'referrer-policy': 'no-referrer' },
  );

/** `/v1/oauth-providers`: where end users connect their accounts; `/v1/oauth/callback`: where they come back. */
export function registerOAuthRoutes(app: OpenAPIHono<AppEnv>, rt: Runtime) {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/oauth-providers',
      operationId: 'createOAuthProvider',
      tags,
      summary: 'Add an OAuth provider end users connect their accounts at',
      description: 'Endpoints from OpenID Connect discovery (`issuer`) or given; the client secret is sealed and never answered. Register this API’s `/v1/oauth/callback` as a redirect URI at the provider.',
      security,
      request: { body: { content: { 'application/json': { schema: oauthProviderInput } }, required: true } },
      responses: { 201: jsonContent(envelope(oauthProviderShown), 'Created'), 409: jsonContent(commonErrors[400].content['application/json'].schema, 'A provider has the name'), ...commonErrors },
    }),
    async (c) => ok(c, showProvider(await putProvider(rt, c.get('identity').scope, c.req.valid('json'), true)), 201),
  );
  app.openapi(
    createRoute({ method: 'get', path: '/v1/oauth-providers', operationId: 'listOAuthProviders', tags, summary: 'The OAuth providers (never their secrets)', security, responses: { 200: jsonContent(listEnvelope(oauthProviderShown), 'All of them, by name'), ...commonErrors } }),
    async (c) => {
      const all = (await listProviders(rt, c.get('identity').scope)).map(showProvider);
      return okList(c, all, { limit: all.length, nextCursor: null });
    },
  );
  app.openapi(
    createRoute({ method: 'get', path: '/v1/oauth-providers/{name}', operationId: 'getOAuthProvider', tags, summary: 'One OAuth provider', security, request: { params }, responses: { 200: jsonContent(envelope(oauthProviderShown), 'The provider'), ...commonErrors } }),
    async (c) => ok(c, showProvider(await getProvider(rt, c.get('identity').scope, c.req.valid('param').name))),
  );
  app.openapi(
    createRoute({
      method: 'put',
      path: '/v1/oauth-providers/{name}',
      operationId: 'replaceOAuthProvider',
      tags,
      summary: 'Replace an OAuth provider',
      description: 'The whole definition; `clientSecret` left out keeps the stored one. Connections stay.',
      security,
      request: { params, body: { content: { 'application/json': { schema: oauthProviderReplacement } }, required: true } },
      responses: { 200: jsonContent(envelope(oauthProviderShown), 'Replaced'), ...commonErrors },
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      const body = c.req.valid('json');
      if (body.name !== undefined && body.name !== name) throw new ValidationError('name', `must be the provider’s name in the path (${name}): a provider is not renamed`);
      return ok(c, showProvider(await putProvider(rt, c.get('identity').scope, { ...body, name }, false)));
    },
  );
  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/oauth-providers/{name}',
      operationId: 'deleteOAuthProvider',
      tags,
      summary: 'Delete an OAuth provider and its end users’ connections',
      description: 'Every connection to it is removed, its tokens revoked at the provider when it has a revocation endpoint.',
      security,
      request: { params },
      responses: { 200: jsonContent(envelope(z.object({ name: z.string(), deleted: z.literal(true), connectionsRemoved: z.int() })), 'Deleted'), ...commonErrors },
    }),
    async (c) => ok(c, await deleteProvider(rt, c.get('identity').scope, c.req.valid('param').name)),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/oauth/callback',
      operationId: 'oauthCallback',
      tags,
      summary: 'Where a provider sends the end user back (no API key: the state authenticates it)',
      security: [],
      description:
        'Exchanges the code (with its PKCE verifier) for the end user’s tokens, sealed as their connection (a background run that waited for it goes on by itself), and answers a small page saying the account is connected — or a 303 to the `redirectAfter` the connection was started with, with `connected=<provider>` (or `error=<code>`). A state serves once and for ten minutes.',
      request: { query: z.object({ state: z.string().max(200), code: z.string().max(4096).optional(), error: z.string().max(200).optional(), error_description: z.string().max(2000).optional(), iss: z.string().max(2000).optional() }) },
      responses: { ...commonErrors, 200: { description: 'A page: connected, or why not', content: { 'text/html': { schema: z.string() } } }, 303: { description: 'Back to redirectAfter' } },
    }),
    async (c) => {
      const query = c.req.valid('query');
      const done = await completeAuthorization(rt, { state: query.state, ...(query.code ? { code: query.code } : {}), ...(query.error ? { error: query.error } : {}), ...(query.iss !== undefined ? { iss: query.iss } : {}) });
      // A background run that waited for this account goes on by itself (a session's turn is resumed by its client).
      const { waiter } = done;
      if (done.connected && waiter?.runId) {
        await resumeAuthorizedRun(rt, done.scope, waiter.agentId, waiter.runId).catch((error: unknown) => log.warn('run not resumed after the end user connected', { tenantId: done.scope.tenantId, runId: waiter.runId, ...errorFields(error) }));
      }
      if (done.redirectAfter) {
        const next = new URL(done.redirectAfter);
        if (done.connected) next.searchParams.set('connected', done.provider);
        else next.searchParams.set('error', done.reason);
        return c.redirect(next.toString(), 303);
      }
      return done.connected
        ? page(c, 200, 'Account connected', `Your ${done.provider} account is connected. You can close this window and go back to the conversation.`)
        : page(c, 200, 'Not connected', `Your ${done.provider} account was not connected (${done.reason}). Go back and try again.`);
    },
  );
}
