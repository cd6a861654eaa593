import { randomBytes } from 'node:crypto';
import type { PlatformSecrets } from '../../shared/platform/platform-secrets';
import { call, type Fetchable, type TestResponse } from './http';
import { testPlatformSecrets } from './runtime';

/** The platform secrets of the test file's runtime. */
export function platformTestSecrets(): PlatformSecrets {
  return testPlatformSecrets;
}

export interface ProvisionedTenant {
  tenantId: string;
  schema: string;
  accessToken: string;
  apiKey: string;
}

export async function provision(app: Fetchable, adminToken: string, body: Record<string, unknown> = {}): Promise<ProvisionedTenant> {
  const res = await call(app, 'POST', '/platform/tenants', {
    headers: { authorization: `Bearer ${adminToken}` },
    body: { name: 'Test tenant', tenantId: `t${randomBytes(6).toString('hex')}`, plan: 'enterprise', ...body },
  });
  if (res.status !== 201) throw new Error(`provisioning failed: ${res.status} ${JSON.stringify(res.body)}`);
  const d = res.body.data;
  return { tenantId: d.tenant.id, schema: d.tenant.schema, accessToken: d.accessToken, apiKey: d.apiKey };
}

/** A platform request with the tenant's token. */
export function pcall(
  app: Fetchable,
  method: string,
  path: string,
  token: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<TestResponse> {
  return call(app, method, path, { ...options, headers: { authorization: `Bearer ${token}`, ...options.headers } });
}
