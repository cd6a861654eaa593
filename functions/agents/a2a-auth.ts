import type { MiddlewareHandler } from 'hono';
import { AppError } from '../../shared/errors';
import type { AppEnv } from '../../shared/http/context';
import { apiKeyAuth } from '../../shared/http/middleware/api-key-auth';
import { addLogContext } from '../../shared/log';
import type { Runtime } from '../../shared/runtime';

// The card at /a2a/{agentId}/.well-known/agent-card.json, and wherever below the agent a client
// resolving the card against another URL of the agent may look for it (the SDK resolves
// `.well-known/agent-card.json` against what it is given: the card's own URL, for one).
const CARD_PATH = /^\/a2a\/([^/]+)\/(?:[^?]*\/)?\.well-known\/agent-card\.json$/;

/**
 * `/a2a`: an agent card is read without a key (clients discover an agent before they hold one of
 * its keys), so its tenant is found from the agent's id among published agents, and its reads are
 * rate-limited as the agent's own at the tenant's plan; everything else takes an API key of the
 * tenant (X-API-Key, or bearer), as /v1 does.
 */
export function a2aAuth(rt: Runtime): MiddlewareHandler<AppEnv> {
  const byKey = apiKeyAuth(rt);
  return async (c, next) => {
    const card = c.req.method === 'GET' ? CARD_PATH.exec(c.req.path) : null;
    if (!card) return byKey(c, next);
    const agentId = card[1]!;
    const scope = await rt.store.publishedAgents.find(agentId);
    const tenant = scope && (await rt.store.apiKeys.recentTenant(scope));
    if (!scope || !tenant) throw new AppError('NOT_FOUND', `A2A agent ${JSON.stringify(agentId)} not found`, { resource: 'A2A agent', id: agentId });
    c.set('identity', { keyId: `a2a-card:${agentId}`, scope, plan: tenant.plan });
    addLogContext({ tenantId: scope.tenantId });
    await next();
  };
}
