import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../shared/http/context';
import { onFirstUse } from '../../shared/load-once';
import { addLogContext } from '../../shared/log';
import type { Runtime } from '../../shared/runtime';

/** What checks a hook's token or signature: the workflows room, loaded with the first hook request as the routes are. */
const workflows = onFirstUse(() => import('./hook-check'));

/** Hooks' requests: their token or signature instead of an API key (the group app calls this for /v1/hooks). */
export function hookAuth(rt: Runtime): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { authenticateHook } = await workflows();
    const { identity, hook } = await authenticateHook(rt, { path: c.req.path, signature: c.req.header('cairn-signature'), body: () => c.req.text() });
    c.set('identity', identity);
    c.set('hook', hook);
    addLogContext({ tenantId: identity.scope.tenantId, keyId: identity.keyId });
    await next();
  };
}
