import { Hono } from 'hono';
import { errorOf } from '../../../test/helpers/http';
import { describe, expect, it } from 'vitest';
import { testPlatformSecrets, testRt } from '../../../test/helpers/runtime';
import { newId } from '../../ids';
import { issueToken, type TokenClaims } from '../../platform/access-tokens';
import type { AppEnv } from '../context';
import { errorHandler } from '../error-handler';
import { platformAdminAuth, platformTokenAuth } from './platform-auth';

const app = new Hono<AppEnv>();
app.onError(errorHandler);
app.use('/admin', platformAdminAuth(testRt));
app.get('/admin', (c) => c.json({ ok: true }));
app.use('/scoped', platformTokenAuth(testRt));
app.get('/scoped', (c) => c.json({ tenantId: c.get('platformToken').tenantId }));

const claims = (over: Partial<TokenClaims> = {}): TokenClaims => ({
  tenantId: 'acme',
  schema: 't_acme',
  tokenId: newId('token', testRt.clock.now()),
  issuedAt: Math.floor(Date.now() / 1000),
  ...over,
});
const bearer = (token: string, extra: Record<string, string> = {}) => ({ headers: { authorization: `Bearer ${token}`, ...extra } });

describe('platformTokenAuth', () => {
  it('admits a token signed with the platform key and gives the handler its claims', async () => {
    const res = await app.request('/scoped', bearer(issueToken(testPlatformSecrets.tokenKey, claims())));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ tenantId: 'acme' });
  });

  it('refuses a missing, foreign-signed, expired or revoked token with one 401', async () => {
    expect((await app.request('/scoped')).status).toBe(401);
    const foreign = issueToken('another-key-another-key-another-key-0000', claims());
    const expired = issueToken(testPlatformSecrets.tokenKey, claims({ issuedAt: 1000, expiresAt: 2000 }));
    const revokedClaims = claims();
    const revoked = issueToken(testPlatformSecrets.tokenKey, revokedClaims);
    await testRt.store.revokedTokens.revokeToken(revokedClaims);
    for (const token of [foreign, expired, revoked]) {
      const res = await app.request('/scoped', bearer(token));
      expect(res.status).toBe(401);
      expect((await errorOf(res)).message).toBe('Invalid, expired or revoked access token');
    }
  });

  it('answers 403 naming the header when X-Tenant-Id or X-PG-Schema differ from the token', async () => {
    const token = issueToken(testPlatformSecrets.tokenKey, claims());
    expect((await app.request('/scoped', bearer(token, { 'X-Tenant-Id': 'acme', 'X-PG-Schema': 't_acme' }))).status).toBe(200);
    for (const [header, value] of [['X-Tenant-Id', 'other'], ['X-PG-Schema', 'public']] as const) {
      const res = await app.request('/scoped', bearer(token, { [header]: value }));
      expect(res.status).toBe(403);
      expect((await errorOf(res))).toMatchObject({ code: 'FORBIDDEN', details: { field: header } });
    }
  });
});

describe('platformAdminAuth', () => {
  it('admits only the platform admin token', async () => {
    expect((await app.request('/admin', bearer(testPlatformSecrets.adminToken))).status).toBe(200);
    expect((await app.request('/admin')).status).toBe(401);
    expect((await app.request('/admin', bearer(`${testPlatformSecrets.adminToken}x`))).status).toBe(401);
    expect((await app.request('/admin', bearer(issueToken(testPlatformSecrets.tokenKey, claims())))).status).toBe(401);
  });
});
