import type { Clock } from '../clock';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from './dynamo-commands';
import { ifConditionHolds } from './conditional';
import { PLANS } from '../config';
import type { TenantScope } from '../tenancy';
import type { Db } from './db';
import { keys } from './keys';
import { anObject, readItem, readItems } from './item-shape';
import { z } from 'zod';

/**
 * Inbound hooks: a global item per hook (a hook's request carries no API key, so the hook id is
 * what finds the tenant) and a pointer in the workflow's partition for listing. Token hooks keep
 * only the token's hash; signature hooks keep their secret sealed (the domain seals it).
 */
const hookShape = z.lazy(() => z.object({
  id: z.string(),
  tenantId: z.string(),
  schema: z.string(),
  workflowId: z.string(),
  name: z.string(),
  auth: z.enum(['token', 'signature']),
  tokenHash: z.string().optional(),
  sealed: anObject.optional(),
  /** The workflow's alias the hook runs (else its draft). */
  alias: z.string().optional(),
  /** The plan of the key that made it: the hook's requests are rate-limited as that key's. */
  plan: z.enum(PLANS),
  createdAt: z.string(),
}));
export type HookRecord = z.infer<typeof hookShape>;
/** What the workflow's partition keeps of a hook, for listing. */
const hookPointerShape = z.lazy(() => hookShape.unwrap().pick({ id: true, name: true, auth: true, alias: true, createdAt: true }));

export function hooksStore(db: Db, clock: Clock) {
  async function putHook(scope: TenantScope, hook: HookRecord): Promise<void> {
    await db.client.send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: db.table, Item: { ...keys.hook(hook.id), ...hook }, ConditionExpression: 'attribute_not_exists(pk)' } },
          { Put: { TableName: db.table, Item: { ...keys.workflowHook(scope, hook.workflowId, hook.id), id: hook.id, name: hook.name, auth: hook.auth, ...(hook.alias ? { alias: hook.alias } : {}), createdAt: hook.createdAt } } },
        ],
      }),
    );
  }

  async function getHook(hookId: string): Promise<HookRecord | undefined> {
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.hook(hookId) }));
    return out.Item ? readItem(hookShape, out.Item, 'hook') : undefined;
  }

  async function listHooks(scope: TenantScope, workflowId: string): Promise<Array<z.infer<typeof hookPointerShape>>> {
    const out = await db.client.send(new QueryCommand({ TableName: db.table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.workflowHookPartition(scope, workflowId) } }));
    return readItems(hookPointerShape, out.Items, 'hook');
  }

  async function deleteHook(scope: TenantScope, workflowId: string, hookId: string): Promise<void> {
    await db.client.send(new DeleteCommand({ TableName: db.table, Key: keys.hook(hookId) }));
    await db.client.send(new DeleteCommand({ TableName: db.table, Key: keys.workflowHook(scope, workflowId, hookId) }));
  }

  /**
   * Claims an Idempotency-Key for one call of a hook: undefined when this call is the first; else
   * what the first recorded (its request's hash, and its execution once started).
   */
  async function claimCall(hookId: string, key: string, requestHash: string): Promise<{ requestHash: string; executionId?: string } | undefined> {
    const put = await ifConditionHolds(
      db.client.send(
        new PutCommand({ TableName: db.table, Item: { ...keys.hookCall(hookId, key), requestHash, expiresAt: Math.floor(clock.now() / 1000) + 86_400 }, ConditionExpression: 'attribute_not_exists(pk)' }),
      ),
    );
    if (put) return undefined;
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.hookCall(hookId, key), ConsistentRead: true }));
    return { requestHash: String(out.Item?.requestHash ?? ''), ...(out.Item?.executionId ? { executionId: String(out.Item.executionId) } : {}) };
  }

  async function recordCall(hookId: string, key: string, executionId: string): Promise<void> {
    await db.client.send(new UpdateCommand({ TableName: db.table, Key: keys.hookCall(hookId, key), UpdateExpression: 'SET executionId = :id', ExpressionAttributeValues: { ':id': executionId } }));
  }

  /** Lets a call whose execution could not be started be sent again with its key. */
  async function releaseCall(hookId: string, key: string): Promise<void> {
    await db.client.send(new DeleteCommand({ TableName: db.table, Key: keys.hookCall(hookId, key) }));
  }

  return { putHook, getHook, listHooks, deleteHook, claimCall, recordCall, releaseCall };
}
