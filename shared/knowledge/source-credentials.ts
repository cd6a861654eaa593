import type { PgCredentials } from './connectors/postgres';
import type { SealedSecret } from '../secrets/secret-box';
import type { TenantScope } from '../tenancy';
import type { Runtime } from '../runtime';

/** Credentials of a source, sealed (envelope encryption) before they reach the table. */
const context = (scope: TenantScope, sourceId: string) => ({ tenantId: scope.tenantId, sourceId, purpose: 'source-credentials' });

export async function storeCredentials(rt: Runtime, scope: TenantScope, sourceId: string, credentials: PgCredentials): Promise<void> {
  const sealed = await rt.secrets.seal(JSON.stringify(credentials), context(scope, sourceId));
  await rt.store.sourceSecrets.putSourceSecret(scope, sourceId, sealed);
}

export async function loadCredentials(rt: Runtime, scope: TenantScope, sourceId: string): Promise<PgCredentials | undefined> {
  const sealed = await rt.store.sourceSecrets.getSourceSecret<SealedSecret>(scope, sourceId);
  if (!sealed) return undefined;
  return JSON.parse(await rt.secrets.open(sealed, context(scope, sourceId))) as PgCredentials;
}

export async function deleteCredentials(rt: Runtime, scope: TenantScope, sourceId: string): Promise<void> {
  await rt.store.sourceSecrets.deleteSourceSecret(scope, sourceId);
}
