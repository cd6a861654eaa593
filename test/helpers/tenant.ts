import { randomBytes } from 'node:crypto';
import type { Plan } from '../../shared/config';
import { scopeOf, type TenantScope } from '../../shared/tenancy';
import { testRt } from './runtime';

export interface TestTenant {
  scope: TenantScope;
  apiKey: string;
  keyId: string;
}

/** A fresh tenant with its own key, so no test sees another's data or rate budget. */
export async function newTenant(plan: Plan = 'enterprise'): Promise<TestTenant> {
  const scope = scopeOf(`ten_test${randomBytes(6).toString('hex')}`);
  await testRt.store.apiKeys.putTenant(scope, { name: 'test', plan });
  const { apiKey, summary } = await testRt.store.apiKeys.createApiKey(scope, { plan });
  return { scope, apiKey, keyId: summary.keyId };
}
