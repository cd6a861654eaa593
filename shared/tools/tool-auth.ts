import { z } from '@hono/zod-openapi';
import { NotFoundError, ToolFailure, ValidationError } from '../errors';
import { accessTokenFor, connectionsRefused, getProvider, PROVIDER_NAME, scopesInput, type EndUser } from '../identity';
import type { Runtime } from '../runtime';
import type { SealedSecret } from '../secrets/secret-box';
import type { TenantScope } from '../tenancy';

/**
 * The auth of tools that call out (http, openapi, mcp, a2a): bearer, a header, or basic — a secret
 * of the tenant's — or `oauth2`: the end user's own access token at an OAuth provider (their
 * connection; a call without one asks them to connect). A secret is sealed before it is stored and
 * never returned: a response shows `{type, configured: true}`, and a client that sends back what it
 * read (no secret) keeps the stored one. `configured: false` with no secret stores none on purpose
 * (an import whose secret was not given): an agent's model is not given the tool, and a call fails,
 * until one is set.
 */
export const authInput = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('bearer'), token: z.string().min(1).max(4096).optional(), configured: z.boolean().optional() }),
  z.strictObject({ type: z.literal('header'), name: z.string().regex(/^[A-Za-z0-9-]{1,100}$/), value: z.string().min(1).max(4096).optional(), configured: z.boolean().optional() }),
  z.strictObject({ type: z.literal('basic'), username: z.string().min(1).max(200), password: z.string().min(1).max(4096).optional(), configured: z.boolean().optional() }),
  z.strictObject({
    type: z.literal('oauth2'),
    provider: z.string().regex(PROVIDER_NAME, { error: 'must name an OAuth provider (POST /v1/oauth-providers)' }),
    scopes: scopesInput.optional().openapi({ description: 'Scopes the call needs, beyond the provider’s own' }),
    configured: z.boolean().optional(),
  }),
]);
export type AuthInput = z.infer<typeof authInput>;

/** Auth as stored: the secret sealed (none while it is not configured). */
export type StoredAuth = { type: AuthInput['type']; name?: string; username?: string; sealed?: SealedSecret; provider?: string; scopes?: string[] };

/** Auth as responses show it. */
export const authShown = z.object({
  type: z.enum(['bearer', 'header', 'basic', 'oauth2']),
  name: z.string().optional(),
  username: z.string().optional(),
  provider: z.string().optional(),
  scopes: z.array(z.string()).optional(),
  configured: z.boolean().openapi({ description: 'Whether a secret is stored; false: the tool is not usable until one is set' }),
});

/** Whether the auth can be used: a secret is stored for it (an end user's token is looked up per call). */
export const hasSecret = (auth: StoredAuth | undefined) => !auth || auth.type === 'oauth2' || auth.sealed !== undefined;

const sealContext = (scope: TenantScope, tool: string) => ({ tenantId: scope.tenantId, tool, purpose: 'agent-tool-auth' });
const secretOf = (auth: AuthInput) => (auth.type === 'bearer' ? auth.token : auth.type === 'header' ? auth.value : auth.type === 'basic' ? auth.password : undefined);

/**
 * Seals a request's secret, or keeps the stored one (`kept`) when the request leaves it out.
 * `tool` binds the secret to its owner (an agent's tool name, a workflow step); `path` names the
 * auth field in errors.
 */
export async function sealAuth(rt: Runtime, scope: TenantScope, tool: string, auth: AuthInput, kept: StoredAuth | undefined, path: string): Promise<StoredAuth> {
  if (auth.type === 'oauth2') {
    await getProvider(rt, scope, auth.provider).catch((error: unknown) => {
      throw error instanceof NotFoundError ? new ValidationError(`${path}.provider`, `names no OAuth provider (${auth.provider}): add it with POST /v1/oauth-providers first`) : error;
    });
    return { type: 'oauth2', provider: auth.provider, ...(auth.scopes?.length ? { scopes: auth.scopes } : {}) };
  }
  const secret = secretOf(auth);
  let sealed: SealedSecret | undefined;
  if (secret !== undefined) sealed = await rt.secrets.seal(secret, sealContext(scope, tool));
  else if (auth.configured === false) sealed = undefined;
  else if (kept?.sealed && kept.type === auth.type) sealed = kept.sealed;
  else {
    const field = auth.type === 'bearer' ? 'token' : auth.type === 'header' ? 'value' : 'password';
    throw new ValidationError(`${path}.${field}`, 'is required (no secret is stored for it yet; configured: false stores none, and the tool stays unusable)');
  }
  return { type: auth.type, ...(auth.type === 'header' ? { name: auth.name } : {}), ...(auth.type === 'basic' ? { username: auth.username } : {}), ...(sealed ? { sealed } : {}) };
}

/** Auth as responses show it: never a secret, sealed or (a definition only compiled, not stored) in clear. */
export function showAuth(auth: StoredAuth | AuthInput): z.infer<typeof authShown> {
  const { sealed, token: _token, value: _value, password: _password, configured, ...shown } = auth as StoredAuth & { token?: string; value?: string; password?: string; configured?: boolean };
  return { ...shown, configured: auth.type === 'oauth2' || sealed !== undefined || secretOf(auth as AuthInput) !== undefined || configured === true };
}

/**
 * The end user has no usable connection to the provider (never connected, revoked, or its refresh
 * refused): the call cannot be made until they connect. A turn that can pause waits for them.
 */
export class AuthorizationRequired extends ToolFailure {
  constructor(
    readonly provider: string,
    readonly scopes: string[] | undefined,
    readonly userId: string | undefined,
  ) {
    super(userId ? `The end user has not connected their ${provider} account (POST /v1/end-users/${encodeURIComponent(userId)}/connections/${provider} starts it)` : `This tool acts as the end user at ${provider}: the turn names no end user (X-End-User-Token or context.userId)`, { retryable: false });
  }
}

/** Who a tool call acts for, where its auth needs to know. */
export interface AuthCaller {
  rt: Runtime;
  scope: TenantScope;
  user?: EndUser;
}

/**
 * How a call's requests carry the tool's auth: `send` gives each request the auth's headers (its
 * secret opened for this call only, or the end user's access token) and, after a 401 to the end
 * user's token, sends it once more with the token refreshed (once per call: refused again, the
 * call fails). Later requests of the call carry the refreshed token.
 */
export interface ToolAuthorization {
  send<R extends { status: number }>(request: (headers: Record<string, string>) => Promise<R>): Promise<R>;
}

function authorizationWith(headers: Record<string, string>, refresh?: () => Promise<Record<string, string>>): ToolAuthorization {
  let current = headers;
  return {
    async send(request) {
      const response = await request(current);
      if (response.status !== 401 || !refresh) return response;
      current = await refresh();
      return request(current);
    },
  };
}

/** A fetch (the MCP and A2A clients') whose requests carry the auth, as `send` says. */
export const authorizedFetch =
  (authorization: ToolAuthorization, fetchFrom: (url: string, init: RequestInit) => Promise<Response>) =>
  (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = String(input instanceof Request ? input.url : input);
    return authorization.send((headers) => fetchFrom(url, { ...init, headers: { ...Object.fromEntries(new Headers(init.headers).entries()), ...headers } }));
  };

export async function toolAuthorization(caller: AuthCaller, tool: string, auth: StoredAuth | undefined): Promise<ToolAuthorization> {
  if (!auth) return authorizationWith({});
  if (auth.type !== 'oauth2') return authorizationWith(await authHeaders(caller, tool, auth));
  const { rt, scope, user } = caller;
  const provider = auth.provider!;
  const required = () => new AuthorizationRequired(provider, auth.scopes, user?.id);
  if (!user) throw required();
  const refused = await connectionsRefused(rt, scope, user);
  if (refused) throw new ToolFailure(`This tool acts as the end user at ${provider}, and ${refused}`, { retryable: false });
  const token = await accessTokenFor(rt, scope, provider, user.id);
  if (!token) throw required();
  let retried = false;
  return authorizationWith({ authorization: `Bearer ${token}` }, async () => {
    if (retried) throw new ToolFailure(`${provider} refused the end user’s token again after it was refreshed`, { retryable: false });
    retried = true;
    const fresh = await accessTokenFor(rt, scope, provider, user.id, { stale: token });
    if (!fresh) throw required();
    return { authorization: `Bearer ${fresh}` };
  });
}

/** The request headers a stored secret auth adds, its secret opened for this call only. */
async function authHeaders({ rt, scope }: AuthCaller, tool: string, auth: StoredAuth): Promise<Record<string, string>> {
  if (!auth.sealed) throw new ToolFailure(`The ${auth.type} auth has no secret (configured: false): set one before the tool is called`, { retryable: false });
  const secret = await rt.secrets.open(auth.sealed, sealContext(scope, tool));
  if (auth.type === 'bearer') return { authorization: `Bearer ${secret}` };
  if (auth.type === 'header') return { [auth.name!.toLowerCase()]: secret };
  return { authorization: `Basic ${Buffer.from(`${auth.username}:${secret}`).toString('base64')}` };
}
