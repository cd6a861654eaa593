import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { PgCredentials } from '../connectors/postgres';
import { open, seal, type SealedSecret } from '../secrets/secret-box';
import { documentClient, tableName } from '../store/client';
import { keys } from '../store/keys';
import type { TenantScope } from '../tenancy';

/** Credentials of a source, sealed (envelope encryption) before they reach the table. */
const context = (scope: TenantScope, sourceId: string) => ({ tenantId: scope.tenantId, sourceId, purpose: 'source-credentials' });

export async function storeCredentials(scope: TenantScope, sourceId: string, credentials: PgCredentials): Promise<void> {
  const sealed = await seal(JSON.stringify(credentials), context(scope, sourceId));
  await documentClient().send(new PutCommand({ TableName: tableName(), Item: { ...keys.sourceSecret(scope, sourceId), sealed } }));
}

export async function loadCredentials(scope: TenantScope, sourceId: string): Promise<PgCredentials | undefined> {
  const out = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.sourceSecret(scope, sourceId) }));
  if (!out.Item) return undefined;
  return JSON.parse(await open(out.Item.sealed as SealedSecret, context(scope, sourceId))) as PgCredentials;
}

export async function deleteCredentials(scope: TenantScope, sourceId: string): Promise<void> {
  await documentClient().send(new DeleteCommand({ TableName: tableName(), Key: keys.sourceSecret(scope, sourceId) }));
}
