import { DeleteCommand, GetCommand, PutCommand } from './dynamo-commands';
import type { TenantScope } from '../tenancy';
import type { Db } from './db';
import { keys } from './keys';

/** A tenant's settings that hold for all its agents: its default guardrails, its end users' identity provider. */
export function tenantSettingsStore(db: Db) {
  async function getGuardrails(scope: TenantScope): Promise<unknown> {
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.tenantGuardrails(scope) }));
    return out.Item?.guardrails;
  }

  async function setGuardrails(scope: TenantScope, guardrails: unknown): Promise<void> {
    // null removes them.
    if (guardrails === null) await db.client.send(new DeleteCommand({ TableName: db.table, Key: keys.tenantGuardrails(scope) }));
    else await db.client.send(new PutCommand({ TableName: db.table, Item: { ...keys.tenantGuardrails(scope), guardrails } }));
  }

  async function getEndUserAuth(scope: TenantScope): Promise<unknown> {
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.tenantEndUserAuth(scope) }));
    return out.Item?.settings;
  }

  /** null removes them; answers whether there were any. */
  async function setEndUserAuth(scope: TenantScope, settings: unknown): Promise<boolean> {
    if (settings !== null) {
      await db.client.send(new PutCommand({ TableName: db.table, Item: { ...keys.tenantEndUserAuth(scope), settings } }));
      return true;
    }
    const out = await db.client.send(new DeleteCommand({ TableName: db.table, Key: keys.tenantEndUserAuth(scope), ReturnValues: 'ALL_OLD' }));
    return out.Attributes !== undefined;
  }

  return { getGuardrails, setGuardrails, getEndUserAuth, setEndUserAuth };
}

export type TenantSettingsStore = ReturnType<typeof tenantSettingsStore>;
