import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from './dynamo-commands';
import { batchOps } from './batch';
import { ifConditionHolds } from './conditional';
import type { TenantScope } from '../tenancy';
import type { Db } from './db';
import { keys } from './keys';

/**
 * OAuth for end users: a tenant's providers (by name), each end user's connection to a provider
 * (its tokens sealed by the caller), and the authorizations under way (by their state, single-use).
 * Items are stored as the identity room gives them; it parses what it reads (identity/oauth-records.ts).
 */
export function oauthStore(db: Db) {
  const { queryAll } = batchOps(db);
  // Read consistently: a provider or connection just written (or removed) is listed as it now is.
  const query = (pk: string, prefix: string) => queryAll(pk, prefix, undefined, { consistent: true });
  const strip = ({ pk: _pk, sk: _sk, ...rest }: Record<string, unknown>) => rest;

  return {
    async getProvider(scope: TenantScope, name: string): Promise<Record<string, unknown> | undefined> {
      const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.oauthProvider(scope, name), ConsistentRead: true }));
      return out.Item ? strip(out.Item) : undefined;
    },
    async listProviders(scope: TenantScope): Promise<Array<Record<string, unknown>>> {
      return (await query(keys.oauthPartition(scope), 'PROVIDER#')).map(strip);
    },
    /** Writes a provider; `create`: only when none has the name (false when one does). */
    async putProvider(scope: TenantScope, name: string, provider: object, create: boolean): Promise<boolean> {
      const put = await ifConditionHolds(db.client.send(new PutCommand({ TableName: db.table, Item: { ...keys.oauthProvider(scope, name), ...provider }, ...(create ? { ConditionExpression: 'attribute_not_exists(pk)' } : {}) })));
      return put !== undefined;
    },
    async deleteProvider(scope: TenantScope, name: string): Promise<boolean> {
      const out = await db.client.send(new DeleteCommand({ TableName: db.table, Key: keys.oauthProvider(scope, name), ReturnValues: 'ALL_OLD' }));
      return out.Attributes !== undefined;
    },

    async getConnection(scope: TenantScope, userId: string, provider: string): Promise<Record<string, unknown> | undefined> {
      const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.oauthConnection(scope, userId, provider), ConsistentRead: true }));
      return out.Item ? strip(out.Item) : undefined;
    },
    /**
     * One end user's connections; without a user, every connection of the tenant. The key's prefix
     * also matches users whose id continues past this one's (`alice#x` after `alice`): the user id
     * each connection holds decides.
     */
    async listConnections(scope: TenantScope, userId?: string): Promise<Array<Record<string, unknown>>> {
      const items = (await query(keys.oauthPartition(scope), userId === undefined ? 'CONN#' : `CONN#${userId}#`)).map(strip);
      return userId === undefined ? items : items.filter((item) => item.userId === userId);
    },
    async putConnection(scope: TenantScope, userId: string, provider: string, connection: object): Promise<void> {
      await db.client.send(new PutCommand({ TableName: db.table, Item: { ...keys.oauthConnection(scope, userId, provider), ...connection } }));
    },
    /** Replaces a connection's tokens only if it is still at `version` (one refresh wins). */
    async replaceConnection(scope: TenantScope, userId: string, provider: string, version: number, connection: object): Promise<boolean> {
      const put = await ifConditionHolds(db.client.send(new PutCommand({ TableName: db.table, Item: { ...keys.oauthConnection(scope, userId, provider), ...connection }, ConditionExpression: 'version = :v', ExpressionAttributeValues: { ':v': version } })));
      return put !== undefined;
    },
    /** Takes the right to refresh a connection until `until` (ms); false while another holds it. */
    async leaseRefresh(scope: TenantScope, userId: string, provider: string, now: number, until: number): Promise<boolean> {
      const leased = await ifConditionHolds(
        db.client.send(
          new UpdateCommand({
            TableName: db.table,
            Key: keys.oauthConnection(scope, userId, provider),
            UpdateExpression: 'SET refreshingUntil = :until',
            ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(refreshingUntil) OR refreshingUntil < :now)',
            ExpressionAttributeValues: { ':until': until, ':now': now },
          }),
        ),
      );
      return leased !== undefined;
    },
    async deleteConnection(scope: TenantScope, userId: string, provider: string): Promise<Record<string, unknown> | undefined> {
      const out = await db.client.send(new DeleteCommand({ TableName: db.table, Key: keys.oauthConnection(scope, userId, provider), ReturnValues: 'ALL_OLD' }));
      return out.Attributes ? strip(out.Attributes) : undefined;
    },

    async putState(state: string, record: object): Promise<void> {
      await db.client.send(new PutCommand({ TableName: db.table, Item: { ...keys.oauthState(state), ...record }, ConditionExpression: 'attribute_not_exists(pk)' }));
    },
    /** The authorization under way, left in place (the callback's tenant, before it is taken). */
    async peekState(state: string): Promise<Record<string, unknown> | undefined> {
      const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.oauthState(state), ConsistentRead: true }));
      return out.Item ? strip(out.Item) : undefined;
    },
    /** The authorization under way, removed as it is read: a state serves once. */
    async takeState(state: string): Promise<Record<string, unknown> | undefined> {
      const out = await db.client.send(new DeleteCommand({ TableName: db.table, Key: keys.oauthState(state), ReturnValues: 'ALL_OLD' }));
      return out.Attributes ? strip(out.Attributes) : undefined;
    },
  };
}

export type OauthStore = ReturnType<typeof oauthStore>;
