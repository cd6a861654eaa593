import type { Plan } from '../shared/config';
import type { Runtime } from '../shared/runtime';
import { scopeOf } from '../shared/tenancy';

/** Local mode's default tenant: the dev API key belongs to it. */
export const DEV_TENANT_ID = 'ten_local';

/** Makes sure the dev key resolves to the default tenant on the configured plan. */
export async function ensureDevTenant(rt: Runtime, devApiKey: string, plan: Plan): Promise<void> {
  const { putTenant, resolveApiKey, revokeApiKey, createApiKey } = rt.store.apiKeys;
  const scope = scopeOf(DEV_TENANT_ID);
  await putTenant(scope, { name: 'Local development', plan });
  const current = await resolveApiKey(devApiKey);
  if (current?.scope.tenantId === DEV_TENANT_ID && current.plan === plan) return;
  if (current) await revokeApiKey(current.scope, current.keyId);
  await createApiKey(scope, { plan, apiKey: devApiKey, name: 'DEV_API_KEY' });
}
