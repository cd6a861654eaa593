/** Every store function takes this first: no code path can read across tenants. */
export interface TenantScope {
  readonly tenantId: string;
  readonly schema: string;
}

export const TENANT_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{1,62}$/;

/** Tenants whose id starts with `cairn-` are the product's own and live in schema `public`. */
export function scopeOf(tenantId: string): TenantScope {
  if (!TENANT_ID_PATTERN.test(tenantId)) throw new Error(`invalid tenant id: ${tenantId}`);
  return Object.freeze({
    tenantId,
    schema: tenantId.startsWith('cairn-') ? 'public' : `t_${tenantId}`,
  });
}
