import { DeleteCommand, GetCommand, PutCommand } from './dynamo-commands';
import type { TenantScope } from '../tenancy';
import type { Db } from './db';
import { keys } from './keys';

/**
 * Agents published over A2A, found by id alone: an agent card is read before any key is sent, so
 * the tenant must be found from the agent's id (the agent's own record decides whether it is
 * still published).
 */
export function publishedAgentsStore(db: Db) {
  return {
    async publish(scope: TenantScope, agentId: string): Promise<void> {
      await db.client.send(new PutCommand({ TableName: db.table, Item: { ...keys.publishedAgent(agentId), tenantId: scope.tenantId, schema: scope.schema } }));
    },
    async find(agentId: string): Promise<TenantScope | undefined> {
      const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.publishedAgent(agentId) }));
      return out.Item ? { tenantId: String(out.Item.tenantId), schema: String(out.Item.schema) } : undefined;
    },
    async withdraw(agentId: string): Promise<void> {
      await db.client.send(new DeleteCommand({ TableName: db.table, Key: keys.publishedAgent(agentId) }));
    },
  };
}
