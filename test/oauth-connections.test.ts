import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer } from '../local/http-server';
import { createLocalApp } from '../local/local-app';
import { accessTokenFor } from '../shared/identity';
import { call } from './helpers/http';
import { RESOURCE, startOidcServer, type OidcServer } from './helpers/oidc-server';
import { runtimeLater, testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/**
 * End users' connections against a real authorization server (`oidc-provider`) whose login and
 * consent the test drives, and a resource server that checks the tokens with `jose`: a provider
 * found by discovery, the authorization code flow with PKCE and a single-use state, tokens sealed
 * per user, refreshed once when they expire, revoked on disconnect, listed and exported without a
 * token, erased with the user.
 */
const app = createLocalApp(testRt);
const CALLBACK = 'http://localhost/v1/oauth/callback';
let idp: OidcServer;
let t: TestTenant;
const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => call(app, method, path, { key: t.apiKey, headers, ...(body === undefined ? {} : { body }) });
const calendar = () => ({ name: 'calendar', issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, scopes: ['openid', 'offline_access', 'calendar.read'], extraAuthorizeParams: { prompt: 'consent', resource: RESOURCE } });
/** The end user goes to the URL, signs in as `accountId`, consents; their browser comes back to Cairn's callback. */
async function connect(userId: string, accountId = userId, body: Record<string, unknown> = {}) {
  const started = await api('POST', `/v1/end-users/${userId}/connections/calendar`, body);
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const back = await idp.login(started.body.data.url, accountId);
  expect(`${back.origin}${back.pathname}`).toBe(CALLBACK);
  return { started: started.body.data, back, landed: await call(app, 'GET', `${back.pathname}${back.search}`) };
}
const events = async (token: string | undefined) => {
  const res = await fetch(`${idp.resource}/events`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, body: (await res.json()) as { owner?: string } };
};

beforeAll(async () => {
  idp = await startOidcServer({ redirectUri: CALLBACK });
  t = await newTenant();
});
afterAll(() => idp.close());

describe('OAuth providers', () => {
  it('finds a provider’s endpoints by discovery, seals its secret, and refuses what cannot work', async () => {
    const created = await api('POST', '/v1/oauth-providers', calendar());
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data).toMatchObject({ name: 'calendar', authorizationUrl: `${idp.issuer}/auth`, tokenUrl: `${idp.issuer}/token`, revocationUrl: `${idp.issuer}/token/revocation`, clientSecretConfigured: true });
    const listed = await api('GET', '/v1/oauth-providers');
    expect(JSON.stringify(listed.body)).not.toContain(idp.clientSecret);
    expect((await api('POST', '/v1/oauth-providers', calendar())).status).toBe(409);
    const without = await api('POST', '/v1/oauth-providers', { name: 'bare', clientId: 'x' });
    expect(without.status).toBe(400);
    expect(without.body.error.details.field).toBe('authorizationUrl');
    const wrongIssuer = await api('POST', '/v1/oauth-providers', { ...calendar(), name: 'liar', issuer: `${idp.issuer}/other` });
    expect(wrongIssuer.status).toBe(400);
    expect(wrongIssuer.body.error.details.field).toBe('issuer');
    // Replaced without the secret: the stored one is kept.
    const { clientSecret: _secret, ...rest } = calendar();
    expect((await api('PUT', '/v1/oauth-providers/calendar', rest)).body.data.clientSecretConfigured).toBe(true);
    expect((await api('PUT', '/v1/oauth-providers/calendar', { ...rest, name: 'renamed' })).status).toBe(400);
  });
});

describe('an end user’s connection', () => {
  it('connects through login and consent (PKCE, single-use state), and the token is that user’s', async () => {
    const { started, back, landed } = await connect('u-ana');
    const url = new URL(started.url);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('redirect_uri')).toBe(CALLBACK);
    expect(landed.status).toBe(200);
    expect(landed.body).toContain('Account connected');
    // The same state again: refused.
    expect((await call(app, 'GET', `${back.pathname}${back.search}`)).status).toBe(400);

    const listed = await api('GET', '/v1/end-users/u-ana/connections');
    expect(listed.body.data).toEqual([expect.objectContaining({ provider: 'calendar', scopes: expect.arrayContaining(['calendar.read']), connectedAt: expect.any(String) })]);
    expect(JSON.stringify(listed.body)).not.toMatch(/eyJ|sealed|refresh/i);

    const token = await accessTokenFor(testRt, t.scope, 'calendar', 'u-ana');
    expect(await events(token)).toEqual({ status: 200, body: expect.objectContaining({ owner: 'u-ana' }) });
    expect(idp.calls.at(-1)).toEqual({ sub: 'u-ana' });
  });

  it('keeps two users apart', async () => {
    await connect('u-bob');
    const ana = await accessTokenFor(testRt, t.scope, 'calendar', 'u-ana');
    const bob = await accessTokenFor(testRt, t.scope, 'calendar', 'u-bob');
    expect(ana).not.toBe(bob);
    expect((await events(bob)).body.owner).toBe('u-bob');
    expect((await api('GET', '/v1/end-users/u-cy/connections')).body.data).toEqual([]);
    expect(await accessTokenFor(testRt, t.scope, 'calendar', 'u-cy')).toBeUndefined();
    const other = await newTenant();
    expect((await call(app, 'GET', '/v1/end-users/u-ana/connections', { key: other.apiKey })).body.data).toEqual([]);
  });

  it('refreshes an expired token once, however many ask at the same moment', async () => {
    const before = await accessTokenFor(testRt, t.scope, 'calendar', 'u-ana');
    // An hour later the access token has expired: five requests at once, one refresh (the provider rotates refresh tokens: a second refresh with the old one would be refused).
    const later = runtimeLater(testRt, 3_600_000);
    const refreshes = () => idp.grants.filter((g) => g === 'refresh_token').length;
    const refreshed = refreshes();
    const tokens = await Promise.all(Array.from({ length: 5 }, () => accessTokenFor(later, t.scope, 'calendar', 'u-ana')));
    expect(refreshes()).toBe(refreshed + 1);
    expect(new Set(tokens).size).toBe(1);
    expect(tokens[0]).not.toBe(before);
    expect((await events(tokens[0])).body.owner).toBe('u-ana');
    const listed = (await api('GET', '/v1/end-users/u-ana/connections')).body.data[0];
    expect(listed.refreshedAt).toEqual(expect.any(String));
    // A token the API refused is refreshed again on request.
    const again = await accessTokenFor(later, t.scope, 'calendar', 'u-ana', { stale: tokens[0] });
    expect(again).not.toBe(tokens[0]);
    expect((await events(again)).status).toBe(200);
  });

  it('disconnects: tokens revoked at the provider, the connection gone', async () => {
    const revokedBefore = idp.revoked.length;
    const res = await api('DELETE', '/v1/end-users/u-bob/connections/calendar');
    expect(res.body.data).toEqual({ provider: 'calendar', removed: true, revoked: true });
    expect(idp.revoked.length).toBeGreaterThan(revokedBefore);
    expect(await accessTokenFor(testRt, t.scope, 'calendar', 'u-bob')).toBeUndefined();
    expect((await api('DELETE', '/v1/end-users/u-bob/connections/calendar')).status).toBe(404);
  });

  it('sends the browser back to redirectAfter, and says so when the user refuses', async () => {
    const { landed } = await connect('u-dee', 'u-dee', { redirectAfter: 'https://app.example.test/settings' });
    expect(landed.status).toBe(303);
    expect(landed.headers.get('location')).toBe('https://app.example.test/settings?connected=calendar');
    const started = await api('POST', '/v1/end-users/u-eve/connections/calendar', {});
    const state = new URL(started.body.data.url).searchParams.get('state');
    const refused = await call(app, 'GET', `/v1/oauth/callback?state=${state}&error=access_denied`);
    expect(refused.status).toBe(200);
    expect(refused.body).toContain('access_denied');
    expect((await api('GET', '/v1/end-users/u-eve/connections')).body.data).toEqual([]);
    expect((await call(app, 'GET', '/v1/oauth/callback?state=not-a-state-anyone-was-given&code=x')).status).toBe(400);
  });

  it('lists connections in the end user’s export without a token, and erases them with the user', async () => {
    const exported = await api('GET', '/v1/end-users/u-ana/export');
    expect(exported.body.data.connections).toEqual([expect.objectContaining({ provider: 'calendar' })]);
    expect(JSON.stringify(exported.body)).not.toMatch(/eyJ|sealed/);
    const erased = await api('DELETE', '/v1/end-users/u-ana');
    expect(erased.body.data.removed.connections).toBe(1);
    expect(await accessTokenFor(testRt, t.scope, 'calendar', 'u-ana')).toBeUndefined();
  });

  it('deletes a provider with its connections', async () => {
    await connect('u-fay');
    const deleted = await api('DELETE', '/v1/oauth-providers/calendar');
    expect(deleted.body.data).toMatchObject({ name: 'calendar', deleted: true, connectionsRemoved: 2 }); // u-fay and u-dee
    expect((await api('GET', '/v1/end-users/u-fay/connections')).body.data).toEqual([]);
  });
});

describe('what an attacker tries against connections', () => {
  const diary = () => ({ ...calendar(), name: 'diary' });
  const start = (userId: string) => api('POST', `/v1/end-users/${encodeURIComponent(userId)}/connections/diary`, {});
  beforeAll(async () => {
    expect((await api('POST', '/v1/oauth-providers', diary())).status).toBe(201);
  });

  it('refuses a callback whose iss names another authorization server (RFC 9207), and one without iss from a provider that always sends it', async () => {
    const started = await start('u-mix');
    const back = await idp.login(started.body.data.url, 'u-mix');
    // oidc-provider names itself in its authorization responses, and says so in its discovery document.
    expect(back.searchParams.get('iss')).toBe(idp.issuer);
    const forged = new URL(back);
    forged.searchParams.set('iss', 'https://evil.example');
    const landed = await call(app, 'GET', `${forged.pathname}${forged.search}`);
    expect(landed.body).toContain('issuer_mismatch');
    const again = await idp.login((await start('u-mix')).body.data.url, 'u-mix');
    again.searchParams.delete('iss');
    expect((await call(app, 'GET', `${again.pathname}${again.search}`)).body).toContain('issuer_missing');
    expect((await api('GET', '/v1/end-users/u-mix/connections')).body.data).toEqual([]);
    // Its own iss connects.
    const honest = await idp.login((await start('u-mix')).body.data.url, 'u-mix');
    expect((await call(app, 'GET', `${honest.pathname}${honest.search}`)).body).toContain('Account connected');
  });

  it('lists and exports exactly one user’s connections, not those of a user whose id begins with theirs', async () => {
    for (const userId of ['u-gil', 'u-gil#x']) {
      const back = await idp.login((await start(userId)).body.data.url, userId);
      expect((await call(app, 'GET', `${back.pathname}${back.search}`)).body).toContain('Account connected');
    }
    expect((await api('GET', '/v1/end-users/u-gil/connections')).body.data).toHaveLength(1);
    expect((await api('GET', '/v1/end-users/u-gil/export')).body.data.connections).toHaveLength(1);
    expect((await api('GET', `/v1/end-users/${encodeURIComponent('u-gil#x')}/connections`)).body.data).toHaveLength(1);
  });

  it('builds the redirect URI from where the server listens, never from the Host header a client sends', async () => {
    const server = await startHttpServer(app.fetch, { port: 0, hostname: '127.0.0.1', clock: testRt.clock });
    try {
      const port = (server.address() as AddressInfo).port;
      const res = await fetch(`http://127.0.0.1:${port}/v1/end-users/u-host/connections/diary`, { method: 'POST', headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json', host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' }, body: '{}' });
      const body = (await res.json()) as { data: { url: string } };
      expect(res.status, JSON.stringify(body)).toBe(201);
      expect(new URL(body.data.url).searchParams.get('redirect_uri')).toBe(`http://localhost:${port}/v1/oauth/callback`);
    } finally {
      server.close();
    }
  });
});

describe('a token endpoint that redirects', () => {
  it('is not followed: the code, the verifier and the client secret are never sent to where it points', async () => {
    const stolen: string[] = [];
    const catcher = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        stolen.push(body);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: 'x', token_type: 'Bearer' }));
      });
    });
    await new Promise<void>((resolve) => catcher.listen(0, '127.0.0.1', resolve));
    const bouncer = createServer((_req, res) => res.writeHead(307, { location: `http://localhost:${(catcher.address() as AddressInfo).port}/steal` }).end());
    await new Promise<void>((resolve) => bouncer.listen(0, '127.0.0.1', resolve));
    try {
      const created = await api('POST', '/v1/oauth-providers', { name: 'bouncing', authorizationUrl: `${idp.issuer}/auth`, tokenUrl: `http://localhost:${(bouncer.address() as AddressInfo).port}/token`, clientId: idp.clientId, clientSecret: 'bouncing-client-secret' });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const started = await api('POST', '/v1/end-users/u-bounce/connections/bouncing', {});
      const state = new URL(started.body.data.url).searchParams.get('state')!;
      const landed = await call(app, 'GET', `/v1/oauth/callback?state=${state}&code=a-code`);
      expect(landed.status).not.toBe(200);
      expect(stolen).toEqual([]);
      expect((await api('GET', '/v1/end-users/u-bounce/connections')).body.data).toEqual([]);
    } finally {
      catcher.close();
      bouncer.close();
    }
  });
});
