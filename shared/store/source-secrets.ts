import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { SealedSecret } from '../secrets/secret-box';
import type { TenantScope } from '../tenancy';
import type { Db } from './db';
import { keys } from './keys';

/** A knowledge source's credentials, stored only sealed (the domain seals and opens them). */
export function sourceSecretsStore(db: Db) {
  async function putSourceSecret(scope: TenantScope, sourceId: string, sealed: SealedSecret): Promise<void> {
    await db.client.send(new PutCommand({ TableName: db.table, Item: { ...keys.sourceSecret(scope, sourceId), sealed } }));
  }

  async function getSourceSecret(scope: TenantScope, sourceId: string): Promise<SealedSecret | undefined> {
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.sourceSecret(scope, sourceId) }));
    return out.Item?.sealed as SealedSecret | undefined;
  }

  async function deleteSourceSecret(scope: TenantScope, sourceId: string): Promise<void> {
    await db.client.send(new DeleteCommand({ TableName: db.table, Key: keys.sourceSecret(scope, sourceId) }));
  }

  return { putSourceSecret, getSourceSecret, deleteSourceSecret };
}

export type SourceSecretsStore = ReturnType<typeof sourceSecretsStore>;
