import { randomBytes } from 'node:crypto';
import type { Plan } from '../../shared/config';
import { createApiKey, putTenant } from '../../shared/store/api-keys';
import { scopeOf, type TenantScope } from '../../shared/tenancy';

export interface TestTenant {
  scope: TenantScope;
  apiKey: string;
  keyId: string;
}

/** A fresh tenant with its own key, so no test sees another's data or rate budget. */
export async function newTenant(plan: Plan = 'enterprise'): Promise<TestTenant> {
  const scope = scopeOf(`ten_test${randomBytes(6).toString('hex')}`);
  await putTenant(scope, { name: 'test', plan });
  const { apiKey, summary } = await createApiKey(scope, { plan });
  return { scope, apiKey, keyId: summary.keyId };
}
