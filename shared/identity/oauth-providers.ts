import { z } from '@hono/zod-openapi';
import { ConflictError, NotFoundError, UpstreamError, ValidationError } from '../errors';
import { outboundRequest, urlRefusal } from '../net/outbound';
import type { Runtime } from '../runtime';
import { httpUrl } from '../schema-helpers';
import { providerRecord, readRecord, type StoredOAuthProvider } from './oauth-records';

export type { StoredOAuthProvider } from './oauth-records';
import type { TenantScope } from '../tenancy';

/**
 * A tenant's OAuth providers: the authorization servers its end users connect their accounts
 * at (a calendar, a ticket system), named so tools can say `auth: {type: "oauth2", provider}`.
 * Endpoints come from OpenID Connect discovery (`issuer`) or are given; the client secret is sealed
 * and never answered.
 */
export const PROVIDER_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const scopeName = z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]{1,200}$/, { error: 'must be an OAuth scope (no spaces or quotes)' });
/** OAuth scopes as requests give them (a provider's, a connection's, a tool's). */
export const scopesInput = z.array(scopeName).max(50);

const providerFields = z.strictObject({
  name: z.string().regex(PROVIDER_NAME, { error: 'must be 1–63 lower-case letters, digits, _ or -, starting with a letter or digit' }).openapi({ example: 'calendar' }),
  issuer: httpUrl().optional().openapi({ description: 'An OpenID Connect issuer: its endpoints are read from /.well-known/openid-configuration (explicit URLs below win)' }),
  authorizationUrl: httpUrl().optional().openapi({ description: 'Where the end user signs in and consents (without issuer: required)' }),
  tokenUrl: httpUrl().optional().openapi({ description: 'Where codes and refresh tokens are exchanged (without issuer: required)' }),
  revocationUrl: httpUrl().optional().openapi({ description: 'Where a disconnected account’s tokens are revoked (RFC 7009)' }),
  clientId: z.string().min(1).max(500),
  clientSecret: z.string().min(1).max(4096).optional().openapi({ description: 'Sealed, never answered; left out on an update, the stored one is kept' }),
  scopes: scopesInput.default([]).openapi({ description: 'Asked for by every connection (a tool may ask for more)' }),
  extraAuthorizeParams: z.record(z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/), z.string().max(1000)).optional().openapi({ description: 'Added to the authorization URL (e.g. access_type=offline, prompt=consent, resource)', example: { prompt: 'consent' } }),
  redirectUri: httpUrl().optional().openapi({ description: 'Where the provider sends the end user back: this API’s /v1/oauth/callback, as registered at the provider (default: as the request that starts the connection reached the API)' }),
});

function endpointsGiven(body: { issuer?: string; authorizationUrl?: string; tokenUrl?: string }, ctx: z.RefinementCtx) {
  if (!body.issuer && !body.authorizationUrl) ctx.addIssue({ code: 'custom', path: ['authorizationUrl'], message: 'is required without issuer' });
  if (!body.issuer && !body.tokenUrl) ctx.addIssue({ code: 'custom', path: ['tokenUrl'], message: 'is required without issuer' });
}

const example = { authorizationUrl: 'https://login.example.com/oauth2/authorize', tokenUrl: 'https://login.example.com/oauth2/token', clientId: 'cairn', clientSecret: 's3cr3t', scopes: ['offline_access', 'calendar.read'] };
export const oauthProviderInput = providerFields.superRefine(endpointsGiven).openapi('OAuthProviderInput', { example: { name: 'calendar', ...example } });
/** A replacement: the name is the path's (given, it must be the same). */
export const oauthProviderReplacement = providerFields.extend({ name: providerFields.shape.name.optional() }).superRefine(endpointsGiven).openapi('OAuthProviderReplacement', { example });
export type OAuthProviderInput = z.infer<typeof oauthProviderInput>;

/** A provider as responses show it: as stored, its secret only said to be configured. */
export const oauthProviderShown = providerRecord.omit({ sealedSecret: true, issParameterSupported: true }).extend({ clientSecretConfigured: z.boolean() }).openapi('OAuthProvider');

const sealContext = (scope: TenantScope, name: string) => ({ tenantId: scope.tenantId, provider: name, purpose: 'oauth-client-secret' });

export function showProvider(provider: StoredOAuthProvider): z.infer<typeof oauthProviderShown> {
  const { sealedSecret, issParameterSupported: _iss, ...shown } = provider;
  return { ...shown, clientSecretConfigured: sealedSecret !== undefined };
}

/** The endpoints an issuer publishes (OpenID Connect discovery, through the outbound guard); its `issuer` must be the one given. */
async function discovered(rt: Runtime, issuer: string): Promise<{ authorizationUrl?: string; tokenUrl?: string; revocationUrl?: string; issParameterSupported?: boolean }> {
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  let body: Record<string, unknown>;
  try {
    const res = await outboundRequest(url, { headers: { accept: 'application/json' }, timeoutMs: 5_000, maxBytes: 256 * 1024 }, rt.outbound);
    if (res.status !== 200) throw new ValidationError('issuer', `answered ${res.status} at ${url}: not an OpenID Connect issuer`);
    body = JSON.parse(res.body.toString('utf8')) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof ValidationError) throw error;
    if (error instanceof UpstreamError) throw new ValidationError('issuer', `could not be reached: ${error.message}`);
    throw new ValidationError('issuer', `did not answer its discovery document as JSON at ${url}`);
  }
  if (typeof body.issuer !== 'string' || body.issuer.replace(/\/+$/, '') !== issuer.replace(/\/+$/, '')) {
    throw new ValidationError('issuer', `names itself ${JSON.stringify(body.issuer)} in its discovery document, not ${issuer}`);
  }
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return { authorizationUrl: text(body.authorization_endpoint), tokenUrl: text(body.token_endpoint), revocationUrl: text(body.revocation_endpoint), ...(body.authorization_response_iss_parameter_supported === true ? { issParameterSupported: true } : {}) };
}

export async function getProvider(rt: Runtime, scope: TenantScope, name: string): Promise<StoredOAuthProvider> {
  const stored = readRecord(providerRecord, await rt.store.oauth.getProvider(scope, name), 'OAuth provider');
  if (!stored) throw new NotFoundError('OAuth provider', name);
  return stored;
}

export async function listProviders(rt: Runtime, scope: TenantScope): Promise<StoredOAuthProvider[]> {
  return (await rt.store.oauth.listProviders(scope)).map((item) => readRecord(providerRecord, item, 'OAuth provider')!).sort((a, b) => a.name.localeCompare(b.name));
}

/** Creates (`create`) or replaces a provider; 409 when creating a name taken, 404 when replacing one that is not. */
export async function putProvider(rt: Runtime, scope: TenantScope, input: OAuthProviderInput, create: boolean): Promise<StoredOAuthProvider> {
  const before = create ? undefined : await getProvider(rt, scope, input.name);
  const found = input.issuer ? await discovered(rt, input.issuer) : {};
  const authorizationUrl = input.authorizationUrl ?? found.authorizationUrl;
  const tokenUrl = input.tokenUrl ?? found.tokenUrl;
  if (!authorizationUrl) throw new ValidationError('authorizationUrl', 'is required: the issuer publishes no authorization_endpoint');
  if (!tokenUrl) throw new ValidationError('tokenUrl', 'is required: the issuer publishes no token_endpoint');
  const revocationUrl = input.revocationUrl ?? found.revocationUrl;
  // Cairn calls these itself: a URL the outbound guard refuses is a 400 now, not a failed connection later.
  for (const [field, url] of [['tokenUrl', tokenUrl], ['revocationUrl', revocationUrl]] as const) {
    const refusal = url ? await urlRefusal(url, rt.outbound) : undefined;
    if (refusal) throw new ValidationError(field, refusal);
  }
  const sealedSecret = input.clientSecret !== undefined ? await rt.secrets.seal(input.clientSecret, sealContext(scope, input.name)) : before?.sealedSecret;
  const now = new Date(rt.clock.now()).toISOString();
  const stored: StoredOAuthProvider = {
    name: input.name,
    ...(input.issuer ? { issuer: input.issuer } : {}),
    ...(found.issParameterSupported ? { issParameterSupported: true } : {}),
    authorizationUrl,
    tokenUrl,
    ...(revocationUrl ? { revocationUrl } : {}),
    clientId: input.clientId,
    ...(sealedSecret ? { sealedSecret } : {}),
    scopes: input.scopes,
    ...(input.extraAuthorizeParams ? { extraAuthorizeParams: input.extraAuthorizeParams } : {}),
    ...(input.redirectUri ? { redirectUri: input.redirectUri } : {}),
    createdAt: before?.createdAt ?? now,
    updatedAt: now,
  };
  if (!(await rt.store.oauth.putProvider(scope, input.name, stored, create))) throw new ConflictError(`An OAuth provider named ${input.name} exists already`, { name: input.name });
  return stored;
}

/** Removes a provider and its end users' connections (revoked at the provider where it can). */
export async function removeProvider(rt: Runtime, scope: TenantScope, name: string, disconnect: (userId: string) => Promise<unknown>): Promise<{ name: string; deleted: true; connectionsRemoved: number }> {
  await getProvider(rt, scope, name);
  const connections = (await rt.store.oauth.listConnections(scope)).filter((c) => c.provider === name);
  for (const c of connections) await disconnect(String(c.userId));
  await rt.store.oauth.deleteProvider(scope, name);
  return { name, deleted: true, connectionsRemoved: connections.length };
}

/** The client secret, opened for one token request. */
export const clientSecretOf = (rt: Runtime, scope: TenantScope, provider: StoredOAuthProvider) => (provider.sealedSecret ? rt.secrets.open(provider.sealedSecret, sealContext(scope, provider.name)) : Promise.resolve(undefined));
