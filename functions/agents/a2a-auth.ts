import type { MiddlewareHandler } from 'hono';
import { publishedAgentTenant } from '../../shared/a2a/published-agents';
import { AppError } from '../../shared/errors';
import type { AppEnv } from '../../shared/http/context';
import { apiKeyAuth } from '../../shared/http/middleware/api-key-auth';
import { tenantIdentity } from '../../shared/http/middleware/tenant-identity';
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
  const agentId = (path: string) => CARD_PATH.exec(path)?.[1];
  const byCard = tenantIdentity(
    rt,
    async (c) => {
      const id = agentId(c.req.path)!;
      const scope = await publishedAgentTenant(rt, id);
      return scope && { scope, keyId: `a2a-card:${id}` };
    },
    (c) => new AppError('NOT_FOUND', `A2A agent ${JSON.stringify(agentId(c.req.path))} not found`, { resource: 'A2A agent', id: agentId(c.req.path) }),
  );
  return (c, next) => (c.req.method === 'GET' && agentId(c.req.path) !== undefined ? byCard(c, next) : byKey(c, next));
}
