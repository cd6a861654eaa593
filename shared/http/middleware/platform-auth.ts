import type { MiddlewareHandler } from 'hono';
import { AppError } from '../../errors';
import { addLogContext } from '../../log';
import { verifyToken } from '../../platform/access-tokens';
import { sameSecret } from '../../platform/platform-secrets';
import type { Runtime } from '../../runtime';
import { bearerOf } from '../bearer';
import type { AppEnv } from '../context';

export const SCOPE_HEADERS = { tenant: 'X-Tenant-Id', schema: 'X-PG-Schema' } as const;

/** One answer for every bad token, so a caller learns nothing about why it was refused. */
const invalidToken = () => new AppError('UNAUTHORIZED', 'Invalid, expired or revoked access token');

/**
 * Verifies `Authorization: Bearer cpt_v1…` (signature, expiry, revocation), then the scope
 * headers: a present `X-Tenant-Id` or `X-PG-Schema` that differs from the token is a 403.
 */
export function platformTokenAuth(rt: Runtime): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const token = bearerOf(c.req.header('authorization'));
    if (!token) throw new AppError('UNAUTHORIZED', 'Missing Authorization: Bearer <access token>');
    const { tokenKey } = await rt.platformSecrets();
    const verified = verifyToken(tokenKey, token, Math.floor(rt.clock.now() / 1000));
    if (!verified || (await rt.store.revokedTokens.isRevoked(verified.tokenId))) throw invalidToken();
    const tenantHeader = c.req.header(SCOPE_HEADERS.tenant);
    if (tenantHeader !== undefined && tenantHeader !== verified.tenantId) {
      throw new AppError('FORBIDDEN', `${SCOPE_HEADERS.tenant} does not match the access token's tenant`, { field: SCOPE_HEADERS.tenant });
    }
    const schemaHeader = c.req.header(SCOPE_HEADERS.schema);
    if (schemaHeader !== undefined && schemaHeader !== verified.schema) {
      throw new AppError('FORBIDDEN', `${SCOPE_HEADERS.schema} does not match the access token's schema`, { field: SCOPE_HEADERS.schema });
    }
    c.set('platformToken', verified);
    addLogContext({ tenantId: verified.scope.tenantId });
    await next();
  };
}

/** `POST /platform/tenants`: only the platform admin credential. */
export function platformAdminAuth(rt: Runtime): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const presented = bearerOf(c.req.header('authorization'));
    if (!presented) throw new AppError('UNAUTHORIZED', 'Missing Authorization: Bearer <platform admin token>');
    const { adminToken } = await rt.platformSecrets();
    if (!sameSecret(presented, adminToken)) throw new AppError('UNAUTHORIZED', 'Invalid platform admin token');
    await next();
  };
}
