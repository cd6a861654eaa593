import { APIGatewayClient, paginateGetUsagePlans } from '@aws-sdk/client-api-gateway';
import { config, type Plan } from '../config';
import { AppError, ConflictError } from '../errors';
import { registerGatewayKey, removeGatewayKey } from '../gateway-keys';
import { newId } from '../ids';
import { log, errorFields } from '../log';
import { createApiKey, deleteTenantRecord, generateApiKey, putTenant } from '../store/api-keys';
import { scopeOf, type TenantScope } from '../tenancy';
import { issueToken, type TokenClaims } from './access-tokens';
import { platformSecrets } from './platform-secrets';

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
export async function issueAccessToken(scope: TenantScope, ttlSeconds = config.platformTokenTtlSeconds): Promise<IssuedToken> {
  const { tokenKey } = await platformSecrets();
  const issuedAt = Math.floor(Date.now() / 1000);
  const claims: TokenClaims = {
    tenantId: scope.tenantId,
    schema: scope.schema,
    tokenId: newId('token'),
    issuedAt,
    ...(ttlSeconds > 0 ? { expiresAt: issuedAt + ttlSeconds } : {}),
  };
  return { accessToken: issueToken(tokenKey, claims), claims };
}

interface GatewaySettings {
  client: APIGatewayClient;
  /** Usage plans are named `<prefix><plan>`; unset (local mode): keys live in DynamoDB only. */
  usagePlanNamePrefix?: string;
}

let settings: GatewaySettings | undefined;
let planIds: Map<string, string> | undefined;

/** Tests point provisioning at a stand-in of the API Gateway endpoint. */
export function useGateway(given: GatewaySettings | undefined): void {
  settings = given;
  planIds = undefined;
}

function gateway(): GatewaySettings {
  settings ??= {
    client: new APIGatewayClient({ region: config.region, ...(config.apiGatewayEndpoint ? { endpoint: config.apiGatewayEndpoint } : {}) }),
    usagePlanNamePrefix: config.usagePlanNamePrefix,
  };
  return settings;
}

/**
 * The usage plan of a plan, found by name once per instance. (Passing the ids in the function's
 * environment would make the function depend on the usage plans, which depend on the deployment,
 * which depends on the function: a cycle CloudFormation refuses.)
 */
async function usagePlanIdFor(plan: Plan): Promise<string | undefined> {
  const { client, usagePlanNamePrefix: prefix } = gateway();
  if (!prefix) return undefined;
  if (!planIds) {
    const found = new Map<string, string>();
    for await (const page of paginateGetUsagePlans({ client }, { limit: 500 })) {
      for (const p of page.items ?? []) if (p.name?.startsWith(prefix) && p.id) found.set(p.name.slice(prefix.length), p.id);
    }
    planIds = found;
  }
  const id = planIds.get(plan);
  if (!id) throw new Error(`no API Gateway usage plan named ${prefix}${plan}`);
  return id;
}

/**
 * Creates the tenant record, its public API key on the plan (in AWS also an API Gateway key in
 * the plan's usage plan) and a first access token. A duplicate tenant id is a 409; a failure
 * after the record was written removes it again, so the same request can simply be retried.
 */
export async function provisionTenant(input: { name: string; tenantId?: string; plan: Plan }) {
  const scope = scopeOf(input.tenantId ?? newId('tenant'));
  const tenant = await putTenant(scope, { name: input.name, plan: input.plan });
  if (!tenant) {
    throw new ConflictError(`tenant ${scope.tenantId} already exists`, { field: 'tenantId', tenantId: scope.tenantId });
  }
  let gatewayKeyId: string | undefined;
  try {
    const apiKey = generateApiKey();
    if (gateway().usagePlanNamePrefix) {
      try {
        const usagePlanId = (await usagePlanIdFor(input.plan))!;
        gatewayKeyId = await registerGatewayKey(gateway().client, { value: apiKey, name: `${scope.tenantId}-${input.plan}`, usagePlanId });
      } catch (error) {
        throw new AppError('UPSTREAM_ERROR', 'API Gateway did not register the tenant’s API key; retry', { provider: 'apigateway' }, { cause: error });
      }
    }
    await createApiKey(scope, { plan: input.plan, name: 'provisioned', apiKey, gatewayKeyId });
    const issued = await issueAccessToken(scope);
    log.info('tenant provisioned', { tenantId: scope.tenantId, plan: input.plan, gatewayKeyId });
    return {
      tenant: { id: tenant.tenantId, name: tenant.name, schema: tenant.schema, plan: tenant.plan, createdAt: tenant.createdAt },
      ...tokenResponse(issued),
      apiKey,
    };
  } catch (error) {
    log.warn('tenant provisioning undone', { tenantId: scope.tenantId, ...errorFields(error) });
    if (gatewayKeyId) await removeGatewayKey(gateway().client, gatewayKeyId).catch(() => undefined);
    await deleteTenantRecord(scope);
    throw error;
  }
}
