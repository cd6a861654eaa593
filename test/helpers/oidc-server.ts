import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import Provider from 'oidc-provider';

/**
 * A real OpenID Connect provider (`oidc-provider`, certified) for the tests: authorization code
 * with PKCE, refresh tokens, revocation, and JWT access tokens for one API (resource indicators).
 * Its interactions (login, consent) are driven by the test: `login(url, accountId)` follows an
 * authorization URL as a browser would, signs the account in, grants what was asked, and answers
 * where the provider sent the browser back (the client's redirect URI with the code). Beside it a
 * resource server (`resource`) that checks bearer tokens with `jose` against the provider's keys
 * and records whose token each call carried.
 */
export const RESOURCE = 'https://calendar.example.test';

export interface OidcServer {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The resource server's URL: GET /events answers the caller's (the token's `sub`) events. */
  resource: string;
  /** Who called the resource server, in order: the token's subject, or the refusal. */
  calls: Array<{ sub?: string; refused?: string }>;
  /** The resource server refuses this many next calls with a 401, whatever their token (as an API does with a token it revoked). */
  refuseNext: number;
  /** Follows an authorization URL through login and consent as `accountId`; the URL the browser is sent back to. */
  login(authorizationUrl: string, accountId: string): Promise<URL>;
  /** Tokens the provider revoked (by their kind), from its own events. */
  revoked: string[];
  /** The grants its token endpoint gave, in order (`authorization_code`, `refresh_token`). */
  grants: string[];
  close(): Promise<void>;
}

const cookieJar = () => {
  const jar = new Map<string, string>();
  return {
    take(res: Response) {
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const [name, ...value] = pair!.split('=');
        jar.set(name!.trim(), value.join('=').trim());
      }
    },
    header: () => [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
  };
};

export async function startOidcServer(options: { redirectUri: string; scopes?: string[] }): Promise<OidcServer> {
  const clientId = 'cairn-test-client';
  const clientSecret = 'a-client-secret-the-tests-share-with-cairn';
  const revoked: string[] = [];
  const accessTokenTtl = 300;
  const http = createServer();
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const port = (http.address() as { port: number }).port;
  const issuer = `http://localhost:${port}`;
  const scopes = options.scopes ?? ['calendar.read'];

  const provider = new Provider(issuer, {
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: [options.redirectUri], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_post' }],
    pkce: { required: () => true },
    scopes: ['openid', 'offline_access', ...scopes],
    claims: { openid: ['sub'] },
    findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
    features: {
      devInteractions: { enabled: false },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({ scope: scopes.join(' '), audience: RESOURCE, accessTokenFormat: 'jwt', accessTokenTTL: accessTokenTtl }),
      },
    },
    issueRefreshToken: async (_ctx, client, code) => client.grantTypeAllowed('refresh_token') && code.scopes.has('offline_access'),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    cookies: { keys: ['a-cookie-signing-key-for-tests'] },
    ttl: { Interaction: 600, Grant: 3600, Session: 3600, AccessToken: accessTokenTtl, RefreshToken: 86_400, IdToken: 600, AuthorizationCode: 60 },
  });
  provider.proxy = false;
  provider.on('refresh_token.destroyed', () => revoked.push('RefreshToken'));
  provider.on('access_token.destroyed', () => revoked.push('AccessToken'));
  provider.on('grant.revoked', () => revoked.push('Grant'));
  const grants: string[] = [];
  provider.on('grant.success', (ctx) => grants.push(String((ctx.oidc.params as { grant_type?: string } | undefined)?.grant_type)));

  // The interaction page: the test names the account (`?account=`); the provider is told it signed in and granted what was asked.
  const callback = provider.callback();
  http.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', issuer);
    const match = /^\/interaction\/([^/]+)$/.exec(url.pathname);
    if (!match) return void callback(req, res);
    void (async () => {
      try {
        const details = await provider.interactionDetails(req, res);
        const accountId = url.searchParams.get('account') ?? 'nobody';
        const grant = details.grantId ? ((await provider.Grant.find(details.grantId)) ?? new provider.Grant({ accountId, clientId: String(details.params.client_id) })) : new provider.Grant({ accountId, clientId: String(details.params.client_id) });
        // What was asked is granted: the scopes as OpenID Connect scopes, and for the API.
        const asked = typeof details.params.scope === 'string' ? details.params.scope : '';
        grant.addOIDCScope(asked);
        const resource = typeof details.params.resource === 'string' ? details.params.resource : RESOURCE;
        grant.addResourceScope(resource, asked.split(' ').filter((s) => scopes.includes(s)).join(' '));
        const grantId = await grant.save();
        await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
      } catch (error) {
        res.writeHead(500).end(String(error));
      }
    })();
  });

  // The resource server: a bearer JWT access token for RESOURCE, checked with the provider's keys.
  const keys = createRemoteJWKSet(new URL(`${issuer}/jwks`));
  const calls: OidcServer['calls'] = [];
  const state = { refuseNext: 0 };
  const resource: Server = createServer((req, res) => {
    void (async () => {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      try {
        if (!token) throw new Error('no bearer token');
        if (state.refuseNext > 0) {
          state.refuseNext--;
          throw new Error('token refused by the API');
        }
        const { payload } = await jwtVerify(token, keys, { issuer, audience: RESOURCE });
        calls.push({ sub: payload.sub });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ owner: payload.sub, events: [{ title: `Dentist for ${payload.sub}`, at: '2026-12-01T09:00:00Z' }] }));
      } catch (error) {
        calls.push({ refused: (error as Error).message });
        res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"', 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_token' }));
      }
    })();
  });
  await new Promise<void>((resolve) => resource.listen(0, '127.0.0.1', resolve));

  async function login(authorizationUrl: string, accountId: string): Promise<URL> {
    const jar = cookieJar();
    let next = new URL(authorizationUrl);
    for (let hop = 0; hop < 10; hop++) {
      if (next.origin !== issuer) return next; // back at the client
      if (next.pathname.startsWith('/interaction/')) next.searchParams.set('account', accountId);
      const res = await fetch(next, { redirect: 'manual', headers: { cookie: jar.header() } });
      jar.take(res);
      const location = res.headers.get('location');
      if (!location) throw new Error(`the provider answered ${res.status} without a redirect at ${next.pathname}: ${await res.text()}`);
      next = new URL(location, next);
    }
    throw new Error('too many redirects');
  }

  return {
    get refuseNext() {
      return state.refuseNext;
    },
    set refuseNext(n: number) {
      state.refuseNext = n;
    },
    issuer,
    clientId,
    clientSecret,
    resource: `http://localhost:${(resource.address() as { port: number }).port}`,
    calls,
    login,
    revoked,
    grants,
    close: async () => {
      await new Promise<void>((resolve) => resource.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
