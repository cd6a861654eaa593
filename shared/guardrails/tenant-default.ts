import type { Runtime } from '../runtime';
import type { TenantScope } from '../tenancy';
import type { Guardrails } from './settings';

/**
 * A tenant's default guardrails, which every agent's own extend: read once per 30 s per warm
 * instance (every guarded turn needs them), set through the platform API.
 */
export async function tenantGuardrails(rt: Runtime, scope: TenantScope): Promise<Guardrails | undefined> {
  const key = `${scope.tenantId}#${scope.schema}`;
  const cached = rt.caches.tenantGuardrails.get(key) as { value?: Guardrails } | undefined;
  if (cached) return cached.value;
  const value = (await rt.store.tenantSettings.getGuardrails(scope)) as Guardrails | undefined;
  rt.caches.tenantGuardrails.set(key, { value });
  return value;
}

/** Sets (or, with null, removes) the tenant's default guardrails; this instance sees it at once, others within 30 s. */
export async function setTenantGuardrails(rt: Runtime, scope: TenantScope, guardrails: Guardrails | null): Promise<Guardrails | null> {
  await rt.store.tenantSettings.setGuardrails(scope, guardrails);
  rt.caches.tenantGuardrails.forget(`${scope.tenantId}#${scope.schema}`);
  return guardrails;
}
