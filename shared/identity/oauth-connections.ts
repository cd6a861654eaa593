import { createHash, randomBytes } from 'node:crypto';
import { z } from '@hono/zod-openapi';
import { UpstreamError, ValidationError } from '../errors';
import { log } from '../log';
import { outboundRequest } from '../net/outbound';
import type { Runtime } from '../runtime';
import { scopeOf, type TenantScope } from '../tenancy';
import { clientSecretOf, getProvider, removeProvider } from './oauth-providers';
import { connectionRecord, providerRecord, readRecord, stateRecord, type AuthorizationWaiter, type StoredConnection, type StoredOAuthProvider, type StoredState } from './oauth-records';

export type { AuthorizationWaiter } from './oauth-records';

/**
 * End users' connections to OAuth providers: the authorization code flow with PKCE (S256) and a
 * `state` bound to tenant, user and what waits for it (single-use, ten minutes); the tokens sealed
 * per tenant, provider and user; an access token refreshed before it expires, one refresh at a
 * time per connection; revocation at the provider on disconnect. Tokens are never answered,
 * logged, traced or quoted in errors.
 */
const STATE_SECONDS = 600;
/** An access token this close to its expiry is refreshed first. */
const EXPIRY_MARGIN_MS = 60_000;
const REFRESH_LEASE_MS = 15_000;
const TOKEN_TIMEOUT_MS = 10_000;

export const connectionShown = z
  .object({
    provider: z.string(),
    scopes: z.array(z.string()),
    connectedAt: z.string(),
    refreshedAt: z.string().optional(),
    expiresAt: z.string().optional().openapi({ description: 'When the current access token expires (it is refreshed before use)' }),
  })
  .openapi('EndUserConnection');

const tokenContext = (scope: TenantScope, provider: string, userId: string) => ({ tenantId: scope.tenantId, provider, userId, purpose: 'oauth-token' });
const verifierContext = (tenantId: string, state: string) => ({ tenantId, state, purpose: 'oauth-pkce' });
const base64url = (bytes: Buffer) => bytes.toString('base64url');

export function showConnection(c: StoredConnection): z.infer<typeof connectionShown> {
  return { provider: c.provider, scopes: c.scopes, connectedAt: c.connectedAt, ...(c.refreshedAt ? { refreshedAt: c.refreshedAt } : {}), ...(c.accessExpiresAt ? { expiresAt: new Date(c.accessExpiresAt).toISOString() } : {}) };
}

/**
 * Where the end user goes to connect their account: the provider's authorization URL with PKCE
 * and a fresh state that remembers who asked and what waits.
 */
export async function startAuthorization(
  rt: Runtime,
  scope: TenantScope,
  request: { provider: string; userId: string; scopes?: string[]; redirectUri?: string; redirectAfter?: string; waiter?: AuthorizationWaiter },
): Promise<{ url: string; expiresAt: string }> {
  const provider = await getProvider(rt, scope, request.provider);
  const redirectUri = provider.redirectUri ?? request.redirectUri;
  if (!redirectUri) throw new ValidationError('redirectUri', `is not known for ${provider.name}: set the provider's redirectUri (this API's /v1/oauth/callback)`);
  const state = base64url(randomBytes(32));
  const verifier = base64url(randomBytes(48));
  const challenge = base64url(createHash('sha256').update(verifier).digest());
  const scopes = [...new Set([...provider.scopes, ...(request.scopes ?? [])])];
  const expiresAt = Math.floor(rt.clock.now() / 1000) + STATE_SECONDS;
  const stored: StoredState = {
    tenantId: scope.tenantId,
    userId: request.userId,
    provider: provider.name,
    scopes,
    sealedVerifier: await rt.secrets.seal(verifier, verifierContext(scope.tenantId, state)),
    redirectUri,
    ...(request.redirectAfter ? { redirectAfter: request.redirectAfter } : {}),
    ...(request.waiter ? { waiter: request.waiter } : {}),
    expiresAt,
  };
  await rt.store.oauth.putState(state, stored);
  const url = new URL(provider.authorizationUrl);
  for (const [k, v] of Object.entries(provider.extraAuthorizeParams ?? {})) url.searchParams.set(k, v);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', provider.clientId);
  url.searchParams.set('redirect_uri', redirectUri);
  if (scopes.length > 0) url.searchParams.set('scope', scopes.join(' '));
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', challenge);
  url.searchParams.set('code_challenge_method', 'S256');
  return { url: url.toString(), expiresAt: new Date(expiresAt * 1000).toISOString() };
}

/** A token endpoint's answer: the tokens, or the provider's error code (never its whole body, which may echo secrets). */
async function tokenRequest(rt: Runtime, scope: TenantScope, provider: StoredOAuthProvider, form: Record<string, string>) {
  const secret = await clientSecretOf(rt, scope, provider);
  const body = new URLSearchParams({ ...form, client_id: provider.clientId, ...(secret ? { client_secret: secret } : {}) }).toString();
  // The body carries the client secret and a code or refresh token: a redirect is refused, never followed.
  const res = await outboundRequest(provider.tokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body, timeoutMs: TOKEN_TIMEOUT_MS, maxBytes: 64 * 1024, maxRedirects: 0 }, rt.outbound);
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(res.body.toString('utf8')) as Record<string, unknown>;
  } catch {
    /* judged below */
  }
  if (res.status !== 200 || typeof json.access_token !== 'string') {
    const error = typeof json.error === 'string' ? json.error.slice(0, 100) : `status ${res.status}`;
    return { ok: false as const, error, status: res.status };
  }
  return {
    ok: true as const,
    accessToken: json.access_token,
    refreshToken: typeof json.refresh_token === 'string' ? json.refresh_token : undefined,
    expiresIn: typeof json.expires_in === 'number' ? json.expires_in : undefined,
    scope: typeof json.scope === 'string' ? json.scope : undefined,
  };
}

/**
 * The callback: the state taken (once), the code exchanged with its PKCE verifier, the tokens
 * sealed as the user's connection. What waited for it and where the browser goes next are answered.
 */
export async function completeAuthorization(rt: Runtime, given: { state: string; code?: string; error?: string; iss?: string }) {
  const taken = readRecord(stateRecord, await rt.store.oauth.takeState(given.state), 'OAuth state');
  if (!taken || taken.expiresAt * 1000 < rt.clock.now()) throw new ValidationError('state', 'is unknown, used already or expired: start connecting again');
  const scope = scopeOf(taken.tenantId);
  const done = { scope, userId: taken.userId, provider: taken.provider, redirectAfter: taken.redirectAfter, waiter: taken.waiter };
  if (given.error || !given.code) return { ...done, connected: false as const, reason: given.error ?? 'no code' };
  const provider = await getProvider(rt, scope, taken.provider);
  const mixedUp = issuerRefusal(provider, given.iss);
  if (mixedUp) {
    log.warn('oauth callback refused: issuer', { tenantId: scope.tenantId, provider: provider.name, reason: mixedUp });
    return { ...done, connected: false as const, reason: mixedUp };
  }
  const verifier = await rt.secrets.open(taken.sealedVerifier, verifierContext(taken.tenantId, given.state));
  const tokens = await tokenRequest(rt, scope, provider, { grant_type: 'authorization_code', code: given.code, redirect_uri: taken.redirectUri, code_verifier: verifier });
  if (!tokens.ok) {
    log.warn('oauth code exchange refused', { tenantId: scope.tenantId, provider: provider.name, error: tokens.error });
    return { ...done, connected: false as const, reason: tokens.error };
  }
  const now = rt.clock.now();
  const previous = readRecord(connectionRecord, await rt.store.oauth.getConnection(scope, taken.userId, provider.name), 'OAuth connection');
  const context = tokenContext(scope, provider.name, taken.userId);
  const connection: StoredConnection = {
    userId: taken.userId,
    provider: provider.name,
    scopes: tokens.scope ? tokens.scope.split(' ').filter(Boolean) : taken.scopes,
    connectedAt: new Date(now).toISOString(),
    ...(tokens.expiresIn ? { accessExpiresAt: now + tokens.expiresIn * 1000 } : {}),
    sealedAccess: await rt.secrets.seal(tokens.accessToken, context),
    ...(tokens.refreshToken ? { sealedRefresh: await rt.secrets.seal(tokens.refreshToken, context) } : {}),
    version: (previous?.version ?? 0) + 1,
  };
  await rt.store.oauth.putConnection(scope, taken.userId, provider.name, connection);
  log.info('end user connected', { tenantId: scope.tenantId, provider: provider.name, audit: 'oauth-connect' });
  return { ...done, connected: true as const };
}

/**
 * Why a callback's `iss` (RFC 9207) shows the response came from another authorization server
 * than the one asked (a mix-up attack), or undefined: an `iss` given must be the provider's
 * issuer, and one the provider says it always sends must be there. Providers configured without an
 * issuer have none to compare.
 */
function issuerRefusal(provider: StoredOAuthProvider, iss: string | undefined): string | undefined {
  if (!provider.issuer) return undefined;
  if (iss === undefined) return provider.issParameterSupported ? 'issuer_missing' : undefined;
  return iss.replace(/\/+$/, '') === provider.issuer.replace(/\/+$/, '') ? undefined : 'issuer_mismatch';
}

/**
 * The end user's access token for a provider, refreshed first when it is about to expire (or when
 * `stale`: the API refused it). Undefined when there is no connection, or it can no longer be
 * refreshed: the end user must authorize again.
 */
export async function accessTokenFor(rt: Runtime, scope: TenantScope, providerName: string, userId: string, options: { stale?: string } = {}): Promise<string | undefined> {
  const context = tokenContext(scope, providerName, userId);
  for (let attempt = 0; attempt < 25; attempt++) {
    const connection = readRecord(connectionRecord, await rt.store.oauth.getConnection(scope, userId, providerName), 'OAuth connection');
    if (!connection) return undefined;
    const now = rt.clock.now();
    const access = await rt.secrets.open(connection.sealedAccess, context);
    const fresh = connection.accessExpiresAt === undefined || connection.accessExpiresAt - EXPIRY_MARGIN_MS > now;
    // A token the API refused is refreshed unless another request has replaced it since.
    if (fresh && access !== options.stale) return access;
    if (!connection.sealedRefresh) return options.stale === undefined && connection.accessExpiresAt !== undefined && connection.accessExpiresAt > now ? access : undefined;
    if (!(await rt.store.oauth.leaseRefresh(scope, userId, providerName, now, now + REFRESH_LEASE_MS))) {
      // Another request refreshes it: its new token is read when it is done.
      await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    const provider = await getProvider(rt, scope, providerName);
    const tokens = await tokenRequest(rt, scope, provider, { grant_type: 'refresh_token', refresh_token: await rt.secrets.open(connection.sealedRefresh, context) });
    if (!tokens.ok) {
      if (tokens.status >= 500) throw new UpstreamError(`${providerName} did not refresh the end user’s token (${tokens.error})`, { provider: providerName }, { retryable: true });
      // invalid_grant and the like: revoked or expired at the provider; the user connects again.
      log.warn('oauth refresh refused: connection removed', { tenantId: scope.tenantId, provider: providerName, error: tokens.error });
      await rt.store.oauth.deleteConnection(scope, userId, providerName);
      return undefined;
    }
    const { refreshingUntil: _lease, ...kept } = connection;
    const next: StoredConnection = {
      ...kept,
      ...(tokens.scope ? { scopes: tokens.scope.split(' ').filter(Boolean) } : {}),
      refreshedAt: new Date(now).toISOString(),
      ...(tokens.expiresIn ? { accessExpiresAt: now + tokens.expiresIn * 1000 } : { accessExpiresAt: undefined }),
      sealedAccess: await rt.secrets.seal(tokens.accessToken, context),
      // Rotated refresh tokens replace the old one; otherwise it is kept.
      ...(tokens.refreshToken ? { sealedRefresh: await rt.secrets.seal(tokens.refreshToken, context) } : {}),
      version: connection.version + 1,
    };
    if (next.accessExpiresAt === undefined) delete next.accessExpiresAt;
    if (await rt.store.oauth.replaceConnection(scope, userId, providerName, connection.version, next)) return tokens.accessToken;
  }
  throw new UpstreamError(`The end user’s ${providerName} token could not be refreshed in time`, { provider: providerName }, { retryable: true });
}

/** The tenant an authorization under way belongs to (the callback's, before it takes the state). */
export async function tenantOfState(rt: Runtime, state: string): Promise<TenantScope | undefined> {
  const found = readRecord(stateRecord, await rt.store.oauth.peekState(state), 'OAuth state');
  return found && found.expiresAt * 1000 >= rt.clock.now() ? scopeOf(found.tenantId) : undefined;
}

/** Removes a provider and its connections. */
export const deleteProvider = (rt: Runtime, scope: TenantScope, name: string) => removeProvider(rt, scope, name, (userId) => disconnect(rt, scope, userId, name));

export async function listConnections(rt: Runtime, scope: TenantScope, userId: string): Promise<StoredConnection[]> {
  return (await rt.store.oauth.listConnections(scope, userId)).map((item) => readRecord(connectionRecord, item, 'OAuth connection')!).sort((a, b) => a.provider.localeCompare(b.provider));
}

/** Removes a connection, revoking its tokens at the provider when it has a revocation endpoint (best effort: the connection goes either way). */
export async function disconnect(rt: Runtime, scope: TenantScope, userId: string, providerName: string): Promise<{ removed: boolean; revoked: boolean }> {
  const connection = readRecord(connectionRecord, await rt.store.oauth.deleteConnection(scope, userId, providerName), 'OAuth connection');
  if (!connection) return { removed: false, revoked: false };
  const provider = readRecord(providerRecord, await rt.store.oauth.getProvider(scope, providerName), 'OAuth provider');
  let revoked = false;
  if (provider?.revocationUrl) {
    const context = tokenContext(scope, providerName, userId);
    const [token, hint] = connection.sealedRefresh ? [await rt.secrets.open(connection.sealedRefresh, context), 'refresh_token'] : [await rt.secrets.open(connection.sealedAccess, context), 'access_token'];
    try {
      const secret = await clientSecretOf(rt, scope, provider);
      const res = await outboundRequest(
        provider.revocationUrl,
        { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token, token_type_hint: hint, client_id: provider.clientId, ...(secret ? { client_secret: secret } : {}) }).toString(), timeoutMs: TOKEN_TIMEOUT_MS, maxRedirects: 0 },
        rt.outbound,
      );
      revoked = res.status === 200;
    } catch (error) {
      log.warn('oauth revocation failed', { tenantId: scope.tenantId, provider: providerName, error: (error as Error).message });
    }
  }
  log.info('end user disconnected', { tenantId: scope.tenantId, provider: providerName, revoked, audit: 'oauth-disconnect' });
  return { removed: true, revoked };
}
