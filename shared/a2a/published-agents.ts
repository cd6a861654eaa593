import type { Runtime } from '../runtime';
import type { TenantScope } from '../tenancy';

/**
 * The tenant of an agent published over A2A, found by the agent's id alone (its card is read
 * without a key), or undefined. Kept apart from the agents room so the card's authentication
 * loads none of it.
 */
export const publishedAgentTenant = (rt: Runtime, agentId: string): Promise<TenantScope | undefined> => rt.store.publishedAgents.find(agentId);
