import { createServer } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { fixedJsonServer } from './helpers/json-server';
import { pcall, provision, type ProvisionedTenant } from './helpers/platform';
import { testPlatformSecrets, testRt } from './helpers/runtime';

/**
 * Verified end users: an identity provider's keys served by a real HTTP server (and rotated), its
 * tokens signed with `jose`, sent as X-End-User-Token on every surface that acts for a person.
 * What the product makes of them is observed from outside: the session's user, a workflow's
 * templates and a tool policy's `user`, and a 401 that says why for every kind of bad token.
 */
const ISSUER = 'https://id.example.test/';
const AUDIENCE = 'cairn-tenant-api';

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}
async function signingKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

let published: SigningKey[] = [];
let jwksFetches = 0;
const idp = createServer((req, res) => {
  if (req.url !== '/jwks') return void res.writeHead(404).end();
  jwksFetches++;
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: published.map((k) => k.jwk) }));
});
let jwksUri = '';

async function token(key: SigningKey, claims: Record<string, unknown> = {}, options: { issuer?: string; audience?: string; expiresIn?: string | number; notBefore?: string | number } = {}) {
  let jwt = new SignJWT({ groups: ['support'], ...claims })
    .setProtectedHeader({ alg: 'RS256', kid: key.kid })
    .setSubject(typeof claims.sub === 'string' ? claims.sub : 'u-ana')
    .setIssuer(options.issuer ?? ISSUER)
    .setAudience(options.audience ?? AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(options.expiresIn ?? '5m');
  if (options.notBefore !== undefined) jwt = jwt.setNotBefore(options.notBefore);
  return jwt.sign(key.privateKey);
}

const app = createLocalApp(testRt);
let tenant: ProvisionedTenant;
let first: SigningKey;
const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => call(app, method, path, { key: tenant.apiKey, headers, ...(body === undefined ? {} : { body }) });
const asUser = (jwt: string) => ({ 'x-end-user-token': jwt });
const setAuth = (body: Record<string, unknown>) => pcall(app, 'PUT', '/platform/end-user-auth', tenant.accessToken, { body });
const shop = fixedJsonServer({ order: 'A17', status: 'shipped' });

beforeAll(async () => {
  await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
  jwksUri = `http://localhost:${(idp.address() as { port: number }).port}/jwks`;
  first = await signingKey('key-1');
  published = [first];
  tenant = await provision(app, testPlatformSecrets.adminToken);
});
afterAll(() => new Promise<void>((resolve) => idp.close(() => resolve())));

describe('end-user identity: settings', () => {
  it('refuses settings with two sources of keys or none, naming the field', async () => {
    const both = await setAuth({ issuer: ISSUER, audience: AUDIENCE, jwksUri, hs256Secret: 'x'.repeat(40) });
    expect(both.status).toBe(400);
    expect(JSON.stringify(both.body.error)).toContain('hs256Secret');
    const none = await setAuth({ issuer: ISSUER, audience: AUDIENCE });
    expect(none.status).toBe(400);
    expect(none.body.error.details.field).toBe('jwksUri');
    const short = await setAuth({ issuer: ISSUER, audience: AUDIENCE, hs256Secret: 'too short' });
    expect(short.status).toBe(400);
  });

  it('refuses private key material in an inline key set, and a key set fetched over plain http from a host the operator did not allow', async () => {
    const privateJwk = await exportJWK((await generateKeyPair('RS256', { extractable: true })).privateKey);
    const leaked = await setAuth({ issuer: ISSUER, audience: AUDIENCE, jwks: { keys: [first.jwk, { ...privateJwk, kid: 'oops' }] } });
    expect(leaked.status).toBe(400);
    expect(leaked.body.error.details.field).toBe('jwks.keys[1]');
    expect(leaked.body.error.message).toMatch(/private key material \(d, p, q, dp, dq, qi\)/);
    const symmetric = await setAuth({ issuer: ISSUER, audience: AUDIENCE, jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0', kid: 's' }] } });
    expect(symmetric.body.error.details.field).toBe('jwks.keys[0]');
    const plain = await setAuth({ issuer: ISSUER, audience: AUDIENCE, jwksUri: 'http://login.example.com/jwks' });
    expect(plain.status).toBe(400);
    expect(plain.body.error.details.field).toBe('jwksUri');
    // localhost is an operator-allowed host in the tests (TOOL_ALLOWED_HOSTS): its http key set is taken.
    expect((await setAuth({ issuer: ISSUER, audience: AUDIENCE, jwksUri })).status).toBe(200);
    const longer = await setAuth({ issuer: ISSUER, audience: AUDIENCE, jwksUri, maxTokenLifetimeSeconds: 7 * 86_400 });
    expect(longer.body.data.endUserAuth.maxTokenLifetimeSeconds).toBe(7 * 86_400);
    expect((await setAuth({ issuer: ISSUER, audience: AUDIENCE, jwksUri })).body.data.endUserAuth.maxTokenLifetimeSeconds).toBe(86_400);
  });

  it('keeps an HS256 secret sealed: never answered, kept when a later PUT leaves it out', async () => {
    const secret = 'an-hs256-secret-of-forty-characters-long!';
    const set = await setAuth({ issuer: ISSUER, audience: AUDIENCE, hs256Secret: secret });
    expect(set.status).toBe(200);
    expect(set.body.data.endUserAuth).toMatchObject({ keys: 'hs256Secret', userIdClaim: 'sub', groupsClaim: 'groups', required: false, clockSkewSeconds: 60 });
    const read = await pcall(app, 'GET', '/platform/end-user-auth', tenant.accessToken);
    expect(JSON.stringify(read.body)).not.toContain(secret);
    expect(JSON.stringify(read.body)).not.toContain('sealed');
    // Sent back as read (no secret): the stored one still verifies.
    expect((await setAuth({ issuer: ISSUER, audience: AUDIENCE, clockSkewSeconds: 5 })).status).toBe(200);
    const hs = await new SignJWT({ groups: ['ops'] }).setProtectedHeader({ alg: 'HS256' }).setSubject('u-hs').setIssuer(ISSUER).setAudience(AUDIENCE).setExpirationTime('5m').sign(new TextEncoder().encode(secret));
    const ok = await api('POST', '/v1/knowledge-sources/ks_none/search', { query: 'x' }, asUser(hs));
    expect(ok.status).toBe(404); // past the token: the source does not exist
    // An RS256 token is not accepted by an HS256 setting (no algorithm confusion).
    const rs = await api('POST', '/v1/knowledge-sources/ks_none/search', { query: 'x' }, asUser(await token(first)));
    expect(rs.status).toBe(401);
    expect(rs.body.error).toMatchObject({ code: 'END_USER_TOKEN_INVALID', details: { reason: 'signature' } });
  });

  it('answers the JWKS settings, and after DELETE refuses tokens as not configured', async () => {
    const set = await setAuth({ issuer: ISSUER, audience: [AUDIENCE, 'other'], jwksUri });
    expect(set.body.data.endUserAuth).toMatchObject({ keys: 'jwksUri', jwksUri, audience: [AUDIENCE, 'other'] });
    expect((await pcall(app, 'DELETE', '/platform/end-user-auth', tenant.accessToken)).body.data).toEqual({ removed: true });
    expect((await pcall(app, 'GET', '/platform/end-user-auth', tenant.accessToken)).body.data.endUserAuth).toBeNull();
    const refused = await api('POST', '/v1/agents/agt_none/converse', { message: 'hi' }, asUser(await token(first)));
    expect(refused.status).toBe(401);
    expect(refused.body.error.details.reason).toBe('not_configured');
    expect((await setAuth({ issuer: ISSUER, audience: AUDIENCE, jwksUri })).status).toBe(200);
  });
});

describe('end-user identity: tokens', () => {
  let agentId: string;
  beforeAll(async () => {
    agentId = (await api('POST', '/v1/agents', { name: 'Helper', model: 'local/extractive' })).body.data.id;
  });

  it('acts for the verified user: the session is theirs, whatever context.userId the caller could have sent', async () => {
    const res = await api('POST', `/v1/agents/${agentId}/converse`, { message: 'Hello there' }, asUser(await token(first, { sub: 'u-ana' })));
    expect(res.status).toBe(200);
    const sessions = await api('GET', `/v1/agents/${agentId}/sessions`);
    expect(sessions.body.data.find((s: { sessionId: string }) => s.sessionId === res.body.data.sessionId)).toMatchObject({ userId: 'u-ana' });
    const mismatch = await api('POST', `/v1/agents/${agentId}/converse`, { message: 'Hi', context: { userId: 'u-bob' } }, asUser(await token(first, { sub: 'u-ana' })));
    expect(mismatch.status).toBe(401);
    expect(mismatch.body.error.details.reason).toBe('user_mismatch');
  });

  it('refuses each kind of bad token with a 401 that says why', async () => {
    const stranger = await signingKey('key-1'); // the same key id, another key: a forged signature
    const cases: Array<[string, string]> = [
      [await token(first, {}, { expiresIn: Math.floor(Date.now() / 1000) - 3600 }), 'expired'],
      [await token(first, {}, { audience: 'someone-else' }), 'audience'],
      [await token(first, {}, { issuer: 'https://evil.example/' }), 'issuer'],
      [await token(first, {}, { notBefore: Math.floor(Date.now() / 1000) + 3600 }), 'not_yet_valid'],
      [await token(stranger), 'signature'],
      [(await token(first)).replace(/\.[^.]+$/, '.AAAA'), 'signature'],
      ['not-a-jwt', 'malformed'],
      [await token(first, { sub: 'has space' }), 'user_claim'],
      [await token(first, { groups: 'a'.repeat(300) }), 'groups_claim'],
      // A token without exp would be good for ever; one valid for more than the tenant's bound (24 h by default) is refused too.
      [await new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid: first.kid }).setSubject('u-ana').setIssuer(ISSUER).setAudience(AUDIENCE).setIssuedAt().sign(first.privateKey), 'no_expiry'],
      [await token(first, {}, { expiresIn: '25h' }), 'lifetime'],
      [await new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid: first.kid }).setSubject('u-ana').setIssuer(ISSUER).setAudience(AUDIENCE).setExpirationTime('30d').sign(first.privateKey), 'lifetime'],
    ];
    for (const [jwt, reason] of cases) {
      const res = await api('POST', `/v1/agents/${agentId}/converse`, { message: 'Hi' }, asUser(jwt));
      expect(res.status, reason).toBe(401);
      expect(res.body.error, reason).toMatchObject({ code: 'END_USER_TOKEN_INVALID', details: { reason } });
      expect(res.body.error.message).not.toContain(jwt.slice(0, 40));
    }
  });

  it('follows a key rotation: a token of a new key is verified after one fetch of the JWKS, and unknown keys cause no fetch storm', async () => {
    expect((await api('POST', `/v1/agents/${agentId}/converse`, { message: 'Hi' }, asUser(await token(first)))).status).toBe(200);
    const second = await signingKey('key-2');
    published = [first, second];
    // jose fetches again for a key id it lacks once its cooldown (30 s) since the last fetch has passed.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 31_000);
      const before = jwksFetches;
      const res = await api('POST', `/v1/agents/${agentId}/converse`, { message: 'Hi' }, asUser(await token(second, { sub: 'u-dee' })));
      expect(res.status).toBe(200);
      expect(jwksFetches).toBe(before + 1);
      // Within the cooldown, a key id never published is refused without another fetch.
      for (let i = 0; i < 3; i++) {
        const unknown = await api('POST', `/v1/agents/${agentId}/converse`, { message: 'Hi' }, asUser(await token(await signingKey(`key-x${i}`))));
        expect(unknown.status).toBe(401);
        expect(unknown.body.error.details.reason).toBe('signature');
      }
      expect(jwksFetches).toBe(before + 1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('with required: a context.userId without a token is refused; a request for nobody is not', async () => {
    expect((await setAuth({ issuer: ISSUER, audience: AUDIENCE, jwksUri, required: true })).status).toBe(200);
    const claimed = await api('POST', `/v1/agents/${agentId}/converse`, { message: 'Hi', context: { userId: 'u-ana' } });
    expect(claimed.status).toBe(401);
    expect(claimed.body.error.details.reason).toBe('required');
    expect((await api('POST', `/v1/agents/${agentId}/runs`, { message: 'Hi', context: { userId: 'u-ana' } })).status).toBe(401);
    expect((await api('POST', `/v1/agents/${agentId}/converse`, { message: 'Hi' })).status).toBe(200);
    expect((await setAuth({ issuer: ISSUER, audience: AUDIENCE, jwksUri })).status).toBe(200);
  });

  it('refuses a bad token on search, MCP, runs, responses and chat completions alike', async () => {
    const bad = asUser(await token(first, {}, { audience: 'nope' }));
    const surfaces: Array<[string, string, unknown, Record<string, string>?]> = [
      ['POST', '/v1/knowledge-sources/ks_x/search', { query: 'x' }],
      ['POST', `/v1/agents/${agentId}/runs`, { message: 'Hi' }],
      ['POST', '/v1/responses', { model: agentId, input: 'Hi' }],
      ['POST', '/v1/chat/completions', { model: agentId, messages: [{ role: 'user', content: 'Hi' }] }],
      ['POST', '/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { accept: 'application/json, text/event-stream' }],
    ];
    for (const [method, path, body, extra] of surfaces) {
      const res = await api(method, path, body, { ...bad, ...extra });
      expect(res.status, path).toBe(401);
      expect(JSON.stringify(res.body), path).toContain('audience');
    }
    expect((await api('POST', '/v1/knowledge-sources/ks_x/search', { query: 'x', context: { groups: ['a'] } })).body.error.details.field).toBe('context.groups');
  });
});

describe('end-user identity: what policies and templates see', () => {
  it('gives workflow templates and JSONata user.id, user.groups and user.verified; a tool policy judges on them', async () => {
    const steps = [
      { id: 'who', type: 'transform', config: { expression: '{"id": user.id, "groups": user.groups, "verified": user.verified}' } },
      {
        id: 'order',
        type: 'http',
        config: { url: `${shop.url}/orders/{{user.id}}`, policy: [{ when: "$not('billing' in user.groups) or user.verified = false", action: 'deny', reason: 'Only verified billing staff look orders up' }] },
      },
    ];
    const workflow = await api('POST', '/v1/workflows', { name: 'Whoami', steps });
    expect(workflow.status).toBe(201);
    const id = workflow.body.data.id;

    const billing = await api('POST', `/v1/workflows/${id}/execute`, {}, asUser(await token(first, { sub: 'u-cy', groups: ['billing', 'support'] })));
    expect(billing.body.data.status).toBe('succeeded');
    expect(billing.body.data.user).toEqual({ id: 'u-cy', groups: ['billing', 'support'], verified: true });
    expect(billing.body.data.steps.find((s: { id: string }) => s.id === 'who').output).toEqual({ id: 'u-cy', groups: ['billing', 'support'], verified: true });
    expect(billing.body.data.steps.find((s: { id: string }) => s.id === 'order').status).toBe('succeeded');

    // The same groups on the caller's word: unverified, so the policy refuses.
    const claimed = await api('POST', `/v1/workflows/${id}/execute`, { context: { userId: 'u-cy', groups: ['billing'] } });
    expect(claimed.body.data.user).toEqual({ id: 'u-cy', groups: ['billing'], verified: false });
    const order = claimed.body.data.steps.find((s: { id: string }) => s.id === 'order');
    expect(order.status).toBe('failed');
    expect(JSON.stringify(order.error)).toContain('Only verified billing staff');

    // Nobody: user.id is null, and the policy refuses too.
    const nobody = await api('POST', `/v1/workflows/${id}/execute`, {});
    expect(nobody.body.data.steps.find((s: { id: string }) => s.id === 'who').output).toEqual({ id: null, groups: [], verified: false });
  });

  it('refuses at write time a policy that reads a user field that does not exist', async () => {
    const res = await api('POST', '/v1/workflows', { name: 'Bad', steps: [{ id: 'h', type: 'http', config: { url: `${shop.url}/x`, policy: [{ when: 'user.email = "x"', action: 'deny' }] } }] });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.error)).toContain('user has id, groups, verified');
  });
});
