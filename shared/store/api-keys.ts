import { isoNow, type Clock } from '../clock';
import { hash, randomBytes } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, TransactionCanceledException, TransactWriteCommand } from './dynamo-commands';
import type { Plan } from '../config';
import { newId } from '../ids';
import { scopeOf, type TenantScope } from '../tenancy';
import type { Db } from './db';
import { ifConditionHolds } from './conditional';
import { keys } from './keys';
import { recentReads } from './recent-reads';

/** What a presented API key resolves to. The key itself is never stored, only its SHA-256. */
export interface ApiKeyIdentity {
  keyId: string;
  scope: TenantScope;
  plan: Plan;
}

export interface ApiKeySummary {
  keyId: string;
  tenantId: string;
  plan: Plan;
  name?: string;
  createdAt: string;
  /** The matching API Gateway key, when the key was registered there (AWS). */
  gatewayKeyId?: string;
}

/** Printable ASCII: anything else cannot be a key, and is refused without a read. */
export const API_KEY_PATTERN = /^[\x21-\x7e]{16,256}$/;

/** Every request hashes its key: one-shot, as a Hash object per call costs more than the digest. */
export function hashApiKey(apiKey: string): string {
  return hash('sha256', apiKey, 'hex');
}

/** 32 random bytes: the key is a bearer secret, so it must be unguessable. */
export function generateApiKey(): string {
  return `cak_${randomBytes(32).toString('base64url')}`;
}

export interface TenantRecord {
  tenantId: string;
  schema: string;
  name: string;
  plan: Plan;
  createdAt: string;
}

export function apiKeysStore(db: Db, clock: Clock) {
  // A tenant's record is written once (its plan never changes after): every model call of a run's
  // steps reads its plan, so a read RECENT_MS old serves them.
  const recentTenants = recentReads<TenantRecord>(1000);

  async function getTenant(scope: TenantScope): Promise<TenantRecord | undefined> {
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.tenant(scope) }));
    if (!out.Item) return undefined;
    const { tenantId, schema, name, plan, createdAt } = out.Item as TenantRecord;
    return { tenantId, schema, name, plan, createdAt };
  }

  /** The tenant's record as read within RECENT_MS (the budgets a model call is held to). */
  function recentTenant(scope: TenantScope): Promise<TenantRecord | undefined> {
    return recentTenants.read(scope.tenantId, () => getTenant(scope));
  }

  /** Removes a tenant's record (a provisioning that could not finish is undone). */
  async function deleteTenantRecord(scope: TenantScope): Promise<void> {
    await recentTenants.writing(scope.tenantId, () => db.client.send(new DeleteCommand({ TableName: db.table, Key: keys.tenant(scope) })));
  }

  /** Creates the tenant's record; undefined when the tenant exists already. */
  async function putTenant(scope: TenantScope, tenant: { name: string; plan: Plan }): Promise<TenantRecord | undefined> {
    const record: TenantRecord = { tenantId: scope.tenantId, schema: scope.schema, ...tenant, createdAt: isoNow(clock) };
    const put = await ifConditionHolds(
      db.client.send(
        new PutCommand({
          TableName: db.table,
          Item: { ...keys.tenant(scope), ...record },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
    return put && record;
  }

  /**
   * Stores a key for a tenant. `apiKey` may be given (local mode's DEV_API_KEY); otherwise one is
   * generated. Returns the plaintext key: the only time it is ever available.
   */
  async function createApiKey(
    scope: TenantScope,
    options: { plan: Plan; name?: string; apiKey?: string; gatewayKeyId?: string },
  ): Promise<{ apiKey: string; summary: ApiKeySummary }> {
    const apiKey = options.apiKey ?? generateApiKey();
    const hash = hashApiKey(apiKey);
    const summary: ApiKeySummary = {
      keyId: newId('apiKey', clock.now()),
      tenantId: scope.tenantId,
      plan: options.plan,
      name: options.name,
      createdAt: isoNow(clock),
      gatewayKeyId: options.gatewayKeyId,
    };
    await db.client.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: db.table,
              Item: { ...keys.apiKeyByHash(hash), ...summary },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          {
            Put: {
              TableName: db.table,
              Item: { ...keys.tenantApiKey(scope, summary.keyId), ...summary, hash },
            },
          },
        ],
      }),
    );
    return { apiKey, summary };
  }

  async function resolveApiKey(apiKey: string): Promise<ApiKeyIdentity | undefined> {
    const out = await db.client.send(
      new GetCommand({ TableName: db.table, Key: keys.apiKeyByHash(hashApiKey(apiKey)) }),
    );
    if (!out.Item) return undefined;
    const item = out.Item as ApiKeySummary;
    return { keyId: item.keyId, scope: scopeOf(item.tenantId), plan: item.plan };
  }

  async function listApiKeys(scope: TenantScope): Promise<ApiKeySummary[]> {
    const out = await db.client.send(
      new QueryCommand({
        TableName: db.table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.tenantApiKey(scope, '').pk },
      }),
    );
    return (out.Items ?? []).map((item) => {
      const { keyId, tenantId, plan, name, createdAt, gatewayKeyId } = item as ApiKeySummary;
      return { keyId, tenantId, plan, name, createdAt, gatewayKeyId };
    });
  }

  /**
   * Removes both the look-up and the tenant's entry at once. Returns what was revoked (its API
   * Gateway twin may need removing too), or undefined when the key is unknown.
   */
  async function revokeApiKey(scope: TenantScope, keyId: string): Promise<ApiKeySummary | undefined> {
    const out = await db.client.send(
      new GetCommand({ TableName: db.table, Key: keys.tenantApiKey(scope, keyId) }),
    );
    const hash = out.Item?.hash as string | undefined;
    if (!hash) return undefined;
    try {
      await db.client.send(
        new TransactWriteCommand({
          TransactItems: [
            { Delete: { TableName: db.table, Key: keys.apiKeyByHash(hash) } },
            {
              Delete: {
                TableName: db.table,
                Key: keys.tenantApiKey(scope, keyId),
                ConditionExpression: 'attribute_exists(pk)',
              },
            },
          ],
        }),
      );
      const { pk: _pk, sk: _sk, hash: _hash, ...summary } = out.Item!;
      return summary as ApiKeySummary;
    } catch (error) {
      if (error instanceof TransactionCanceledException) return undefined;
      throw error;
    }
  }
  return { getTenant, recentTenant, deleteTenantRecord, putTenant, createApiKey, resolveApiKey, listApiKeys, revokeApiKey };
}

export type ApiKeysStore = ReturnType<typeof apiKeysStore>;
