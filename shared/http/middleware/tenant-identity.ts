import type { Context, MiddlewareHandler } from 'hono';
import type { AppError } from '../../errors';
import { addLogContext } from '../../log';
import type { Runtime } from '../../runtime';
import type { TenantScope } from '../../tenancy';
import type { AppEnv } from '../context';

/**
 * The identity of a request that carries no API key but names its tenant otherwise (an A2A card
 * by its agent, the OAuth callback by its state): `find` says which tenant, the tenant's plan
 * rate-limits it as its own, and `refused` is what a request whose tenant cannot be found (or no
 * longer exists) is told. `keyId` names the requests in usage and logs.
 */
export function tenantIdentity(rt: Runtime, find: (c: Context<AppEnv>) => Promise<{ scope: TenantScope; keyId: string } | undefined>, refused: (c: Context<AppEnv>) => AppError): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const found = await find(c);
    const tenant = found && (await rt.store.apiKeys.recentTenant(found.scope));
    if (!found || !tenant) throw refused(c);
    c.set('identity', { keyId: found.keyId, scope: found.scope, plan: tenant.plan });
    addLogContext({ tenantId: found.scope.tenantId });
    await next();
  };
}
