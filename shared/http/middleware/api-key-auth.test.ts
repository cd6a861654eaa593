import { Hono } from 'hono';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { errorOf } from '../../../test/helpers/http';
import { testRt } from '../../../test/helpers/runtime';
import { newTenant, type TestTenant } from '../../../test/helpers/tenant';
import type { AppEnv } from '../context';
import { errorHandler } from '../error-handler';
import { apiKeyAuth } from './api-key-auth';

function appWith(cacheSeconds: number) {
  const app = new Hono<AppEnv>();
  app.use('*', apiKeyAuth(testRt, { cacheSeconds }));
  app.onError(errorHandler);
  app.get('/who', (c) => c.json(c.get('identity')));
  return app;
}

describe('apiKeyAuth', () => {
  let t: TestTenant;
  beforeAll(async () => {
    t = await newTenant('pro');
  });
  afterEach(() => vi.restoreAllMocks());

  it('resolves X-API-Key, or a Bearer key, to the tenant, key and plan', async () => {
    const app = appWith(0);
    for (const headers of [{ 'x-api-key': t.apiKey }, { authorization: `Bearer ${t.apiKey}` }] as Array<Record<string, string>>) {
      const res = await app.request('/who', { headers });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ keyId: t.keyId, scope: t.scope, plan: 'pro' });
    }
  });

  it('answers 401 for a missing, malformed or unknown key, reading nothing for a malformed one', async () => {
    const app = appWith(0);
    const reads = vi.spyOn(testRt.store.apiKeys, 'resolveApiKey');
    const missing = await app.request('/who');
    expect(missing.status).toBe(401);
    expect((await errorOf(missing)).message).toBe('Missing API key: send it as X-API-Key: <key> or Authorization: Bearer <key>');
    expect((await app.request('/who', { headers: { 'x-api-key': 'short' } })).status).toBe(401);
    expect(reads).not.toHaveBeenCalled();
    expect((await app.request('/who', { headers: { 'x-api-key': 'cak_unknown_but_well_formed_key' } })).status).toBe(401);
    expect(reads).toHaveBeenCalledTimes(1);
  });

  it('trusts a resolved key for the cache time, and with no cache sees a revocation at once', async () => {
    const own = await newTenant();
    const cached = appWith(60);
    const reads = vi.spyOn(testRt.store.apiKeys, 'resolveApiKey');
    for (let i = 0; i < 3; i++) expect((await cached.request('/who', { headers: { 'x-api-key': own.apiKey } })).status).toBe(200);
    expect(reads).toHaveBeenCalledTimes(1);
    await testRt.store.apiKeys.revokeApiKey(own.scope, own.keyId);
    expect((await appWith(0).request('/who', { headers: { 'x-api-key': own.apiKey } })).status).toBe(401);
  });
});
