import type { MiddlewareHandler } from 'hono';
import { ValidationError } from '../../shared/errors';
import type { AppEnv } from '../../shared/http/context';
import { tenantIdentity } from '../../shared/http/middleware/tenant-identity';
import { tenantOfState } from '../../shared/identity';
import type { Runtime } from '../../shared/runtime';

/**
 * `/v1/oauth/callback`: the provider sends the end user's browser back here with no key; the
 * `state` of an authorization under way names the tenant, whose plan rate-limits the request. A
 * state unknown, used or expired is a 400 before anything else is read.
 */
export function oauthCallbackAuth(rt: Runtime): MiddlewareHandler<AppEnv> {
  return tenantIdentity(
    rt,
    async (c) => {
      const state = c.req.query('state') ?? '';
      const scope = /^[A-Za-z0-9_-]{20,100}$/.test(state) ? await tenantOfState(rt, state) : undefined;
      return scope && { scope, keyId: 'oauth-callback' };
    },
    () => new ValidationError('state', 'is unknown, used already or expired: start connecting again'),
  );
}
