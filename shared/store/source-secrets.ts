import { DeleteCommand, GetCommand, PutCommand } from './dynamo-commands';
import type { TenantScope } from '../tenancy';
import type { Db } from './db';
import { keys } from './keys';

/** A knowledge source's credentials, stored only sealed: the domain seals and opens them, the store keeps the sealed object as is. */
export function sourceSecretsStore(db: Db) {
  async function putSourceSecret(scope: TenantScope, sourceId: string, sealed: object): Promise<void> {
    await db.client.send(new PutCommand({ TableName: db.table, Item: { ...keys.sourceSecret(scope, sourceId), sealed } }));
  }

  async function getSourceSecret<Sealed extends object>(scope: TenantScope, sourceId: string): Promise<Sealed | undefined> {
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.sourceSecret(scope, sourceId) }));
    return out.Item?.sealed as Sealed | undefined;
  }

  async function deleteSourceSecret(scope: TenantScope, sourceId: string): Promise<void> {
    await db.client.send(new DeleteCommand({ TableName: db.table, Key: keys.sourceSecret(scope, sourceId) }));
  }

  return { putSourceSecret, getSourceSecret, deleteSourceSecret };
}

export type SourceSecretsStore = ReturnType<typeof sourceSecretsStore>;
