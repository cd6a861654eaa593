import { DeleteCommand, GetCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { Plan } from '../config';
import type { TenantScope } from '../tenancy';
import type { Db } from './db';
import { keys } from './keys';

/**
 * Inbound hooks: a global item per hook (a hook's request carries no API key, so the hook id is
 * what finds the tenant) and a pointer in the workflow's partition for listing. Token hooks keep
 * only the token's hash; signature hooks keep their secret sealed (the domain seals it).
 */
export interface HookRecord {
  id: string;
  tenantId: string;
  schema: string;
  workflowId: string;
  name: string;
  auth: 'token' | 'signature';
  tokenHash?: string;
  sealed?: object;
  /** The plan of the key that made it: the hook's requests are rate-limited as that key's. */
  plan: Plan;
  createdAt: string;
}

const strip = ({ pk: _pk, sk: _sk, ...rest }: Record<string, unknown>) => rest;

export function hooksStore(db: Db) {
  async function putHook(scope: TenantScope, hook: HookRecord): Promise<void> {
    await db.client.send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: db.table, Item: { ...keys.hook(hook.id), ...hook }, ConditionExpression: 'attribute_not_exists(pk)' } },
          { Put: { TableName: db.table, Item: { ...keys.workflowHook(scope, hook.workflowId, hook.id), id: hook.id, name: hook.name, auth: hook.auth, createdAt: hook.createdAt } } },
        ],
      }),
    );
  }

  async function getHook(hookId: string): Promise<HookRecord | undefined> {
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.hook(hookId) }));
    return out.Item ? (strip(out.Item) as unknown as HookRecord) : undefined;
  }

  async function listHooks(scope: TenantScope, workflowId: string): Promise<Array<Pick<HookRecord, 'id' | 'name' | 'auth' | 'createdAt'>>> {
    const out = await db.client.send(new QueryCommand({ TableName: db.table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.workflowHookPartition(scope, workflowId) } }));
    return (out.Items ?? []).map((i) => strip(i) as unknown as HookRecord);
  }

  async function deleteHook(scope: TenantScope, workflowId: string, hookId: string): Promise<void> {
    await db.client.send(new DeleteCommand({ TableName: db.table, Key: keys.hook(hookId) }));
    await db.client.send(new DeleteCommand({ TableName: db.table, Key: keys.workflowHook(scope, workflowId, hookId) }));
  }

  return { putHook, getHook, listHooks, deleteHook };
}
