import { config, type Plan } from '../config';
import { ConflictError, NotFoundError, UpstreamError } from '../errors';
import { newId } from '../ids';
import { log, errorFields } from '../log';
import type { Runtime } from '../runtime';
import { generateApiKey } from '../store/api-keys';
import { scopeOf, type TenantScope } from '../tenancy';
import { issueToken, type TokenClaims } from './access-tokens';

export interface IssuedToken {
  accessToken: string;
  claims: TokenClaims;
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/** How an issued token is answered: the token, its id and when it expires (null: when revoked). */
export function tokenResponse({ accessToken, claims }: IssuedToken) {
  return { accessToken, tokenId: claims.tokenId, expiresAt: claims.expiresAt ? iso(claims.expiresAt) : null };
}

/** What `GET /platform/login/session` tells about a verified token. */
export function sessionOf(t: TokenClaims) {
  return { tenantId: t.tenantId, schema: t.schema, tokenId: t.tokenId, issuedAt: iso(t.issuedAt), ...(t.expiresAt ? { expiresAt: iso(t.expiresAt) } : {}) };
}

/** A signed token for the tenant, valid PLATFORM_TOKEN_TTL_SECONDS (or `ttlSeconds`) from now. */
export async function issueAccessToken(rt: Runtime, scope: TenantScope, ttlSeconds = config.platformTokenTtlSeconds): Promise<IssuedToken> {
  const { tokenKey } = await rt.platformSecrets();
  const issuedAt = Math.floor(rt.clock.now() / 1000);
  const claims: TokenClaims = {
    tenantId: scope.tenantId,
    schema: scope.schema,
    tokenId: newId('token', rt.clock.now()),
    issuedAt,
    ...(ttlSeconds > 0 ? { expiresAt: issuedAt + ttlSeconds } : {}),
  };
  return { accessToken: issueToken(tokenKey, claims), claims };
}

/**
 * Creates the tenant record, its public API key on the plan (in AWS also an API Gateway key in
 * the plan's usage plan) and a first access token. A duplicate tenant id is a 409; a failure
 * after the record was written removes it again, so the same request can simply be retried.
 */
export async function provisionTenant(rt: Runtime, input: { name: string; tenantId?: string; plan: Plan }) {
  const scope = scopeOf(input.tenantId ?? newId('tenant', rt.clock.now()));
  const tenant = await rt.store.apiKeys.putTenant(scope, { name: input.name, plan: input.plan });
  if (!tenant) {
    throw new ConflictError(`tenant ${scope.tenantId} already exists`, { field: 'tenantId', tenantId: scope.tenantId });
  }
  let gatewayKeyId: string | undefined;
  try {
    const apiKey = generateApiKey();
    if (rt.gateway.enabled) {
      try {
        gatewayKeyId = await rt.gateway.register({ value: apiKey, name: `${scope.tenantId}-${input.plan}`, plan: input.plan });
      } catch (error) {
        throw new UpstreamError('API Gateway did not register the tenant’s API key; retry', { provider: 'apigateway' }, { retryable: true, cause: error });
      }
    }
    await rt.store.apiKeys.createApiKey(scope, { plan: input.plan, name: 'provisioned', apiKey, gatewayKeyId });
    const issued = await issueAccessToken(rt, scope);
    log.info('tenant provisioned', { tenantId: scope.tenantId, plan: input.plan, gatewayKeyId });
    return {
      tenant: { id: tenant.tenantId, name: tenant.name, schema: tenant.schema, plan: tenant.plan, createdAt: tenant.createdAt },
      ...tokenResponse(issued),
      apiKey,
    };
  } catch (error) {
    log.warn('tenant provisioning undone', { tenantId: scope.tenantId, ...errorFields(error) });
    if (gatewayKeyId) await rt.gateway.remove(gatewayKeyId).catch(() => undefined);
    await rt.store.apiKeys.deleteTenantRecord(scope);
    throw error;
  }
}

/** Another access token for an existing tenant (after a revoke it would otherwise have none). */
export async function issueTenantToken(rt: Runtime, tenantId: string, ttlSeconds?: number): Promise<IssuedToken> {
  const scope = scopeOf(tenantId);
  if (!(await rt.store.apiKeys.getTenant(scope))) throw new NotFoundError('tenant', scope.tenantId);
  return issueAccessToken(rt, scope, ttlSeconds);
}

/** Ends a verified token (it is refused from then on, by every instance). */
export async function revokeToken(rt: Runtime, claims: TokenClaims): Promise<void> {
  await rt.store.revokedTokens.revokeToken(claims);
}

/** Ends a token known only by its id (e.g. a leaked one). Its expiry is not known, so the revocation is kept for good. */
export async function revokeTokenById(rt: Runtime, tenantId: string, tokenId: string): Promise<void> {
  await rt.store.revokedTokens.revokeToken({ tenantId: scopeOf(tenantId).tenantId, tokenId });
}
