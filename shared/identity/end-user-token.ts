import type * as JoseModule from 'jose';
import type { JWTPayload, JWTVerifyGetKey } from 'jose';
import { EndUserTokenError, UpstreamError, ValidationError } from '../errors';
import { outboundFetch } from '../net/outbound';
import type { Runtime } from '../runtime';
import type { TenantScope } from '../tenancy';
import { END_USER_ID, GROUP_NAME, MAX_GROUPS, type EndUser } from './end-user';
import { DEFAULT_MAX_LIFETIME_SECONDS, endUserAuthOf, openHs256Secret, type StoredEndUserAuth } from './end-user-auth';

/** Signature algorithms a JWKS key may use; an HS256 secret verifies HS256 only (never `none`). */
const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
/** A JWKS is kept this long, and fetched again at most this often for a key id it lacks (a rotation). */
const JWKS_MAX_AGE_MS = 10 * 60_000;
const JWKS_COOLDOWN_MS = 30_000;
const JWKS_TIMEOUT_MS = 5_000;
/** A token longer than this is refused unread. */
const MAX_TOKEN_CHARS = 16_384;

/** jose, loaded by the first request that brings a token (requests without one never load it). */
type Jose = typeof JoseModule;
const loadJose = (): Promise<Jose> => import('jose');

/**
 * The keys of a JWKS URL, fetched through the outbound guard: jose's remote set keeps them, and
 * fetches again when a token names a key id it does not hold (the provider rotated), at most once
 * per cooldown. One set per tenant and URL per warm instance.
 */
function remoteKeys({ createRemoteJWKSet, customFetch }: Jose, rt: Runtime, scope: TenantScope, uri: string): JWTVerifyGetKey {
  const key = `${scope.tenantId}#${uri}`;
  let keys = rt.caches.endUserJwks.get(key) as JWTVerifyGetKey | undefined;
  if (!keys) {
    keys = createRemoteJWKSet(new URL(uri), {
      cacheMaxAge: JWKS_MAX_AGE_MS,
      cooldownDuration: JWKS_COOLDOWN_MS,
      timeoutDuration: JWKS_TIMEOUT_MS,
      [customFetch]: outboundFetch(rt.outbound, { timeoutMs: JWKS_TIMEOUT_MS, maxBytes: 512 * 1024 }),
    });
    rt.caches.endUserJwks.set(key, keys);
  }
  return keys;
}

/** A claim by name, or by dotted path for a nested one (`realm_access.roles`). */
function claimOf(payload: JWTPayload, path: string): unknown {
  if (path in payload) return payload[path];
  let value: unknown = payload;
  for (const part of path.split('.')) value = value && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
  return value;
}

/** Why jose refused a token, in the reasons the API names. */
function refusal({ errors }: Jose, error: unknown, settings: StoredEndUserAuth): EndUserTokenError | undefined {
  if (error instanceof errors.JWTExpired) return new EndUserTokenError('expired', 'The end user’s token has expired');
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'exp' && error.reason === 'missing') return new EndUserTokenError('no_expiry', 'The end user’s token has no exp claim: tokens must expire');
    if (error.claim === 'iss') return new EndUserTokenError('issuer', `The end user’s token was not issued by ${settings.issuer}`);
    if (error.claim === 'aud') return new EndUserTokenError('audience', 'The end user’s token is not meant for this audience');
    if (error.claim === 'nbf') return new EndUserTokenError('not_yet_valid', 'The end user’s token is not valid yet (nbf)');
    if (error.claim === 'iat') return new EndUserTokenError('not_yet_valid', 'The end user’s token was issued in the future (iat)');
    return new EndUserTokenError('malformed', `The end user’s token has an invalid ${error.claim} claim`);
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return new EndUserTokenError('signature', 'The end user’s token signature does not verify');
  if (error instanceof errors.JWKSNoMatchingKey) return new EndUserTokenError('signature', 'The end user’s token is signed with a key the identity provider does not publish');
  if (error instanceof errors.JOSEAlgNotAllowed) return new EndUserTokenError('signature', 'The end user’s token is signed with an algorithm these keys do not allow');
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid || error instanceof errors.JOSENotSupported || error instanceof errors.JWKInvalid) {
    return new EndUserTokenError('malformed', 'The end user’s token is not a well-formed signed JWT');
  }
  return undefined;
}

/** The end user a token names, once its signature, issuer, audience and times hold; else a 401 that says why. */
export async function verifyEndUserToken(rt: Runtime, scope: TenantScope, settings: StoredEndUserAuth, token: string): Promise<EndUser> {
  if (token.length > MAX_TOKEN_CHARS || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token)) throw new EndUserTokenError('malformed', 'The end user’s token is not a well-formed signed JWT');
  const options = {
    issuer: settings.issuer,
    audience: settings.audience,
    clockTolerance: settings.clockSkewSeconds,
    currentDate: new Date(rt.clock.now()),
    // A token without an expiry would be good for ever.
    requiredClaims: ['exp'],
  };
  const jose = await loadJose();
  const { jwtVerify, createLocalJWKSet, errors } = jose;
  let payload: JWTPayload;
  try {
    if (settings.sealedSecret) {
      const secret = new TextEncoder().encode(await openHs256Secret(rt, scope, settings.sealedSecret));
      ({ payload } = await jwtVerify(token, secret, { ...options, algorithms: ['HS256'] }));
    } else {
      const keys = settings.jwksUri ? remoteKeys(jose, rt, scope, settings.jwksUri) : createLocalJWKSet(settings.jwks as Parameters<typeof createLocalJWKSet>[0]);
      ({ payload } = await jwtVerify(token, keys, { ...options, algorithms: ASYMMETRIC }));
    }
  } catch (error) {
    const refused = refusal(jose, error, settings);
    if (refused) throw refused;
    if (error instanceof errors.JOSEError || error instanceof UpstreamError) {
      // The JWKS could not be fetched or read: the provider's fault, not the caller's.
      throw new UpstreamError('The end users’ identity provider’s keys could not be fetched', { provider: settings.issuer, reason: error instanceof errors.JOSEError ? error.code : 'unreachable' }, { retryable: true, cause: error });
    }
    throw error;
  }
  const lifetime = lifetimeRefusal(payload, settings, rt.clock.now());
  if (lifetime) throw lifetime;
  const id = claimOf(payload, settings.userIdClaim);
  if (typeof id !== 'string' || !END_USER_ID.test(id)) throw new EndUserTokenError('user_claim', `The end user’s token has no usable ${settings.userIdClaim} claim (1–200 characters, no slash or space)`);
  return { id, groups: groupsOf(claimOf(payload, settings.groupsClaim), settings.groupsClaim), verified: true };
}

/** A token valid for longer than the tenant allows (from its iat, else from now), or undefined. */
function lifetimeRefusal(payload: JWTPayload, settings: StoredEndUserAuth, now: number): EndUserTokenError | undefined {
  const max = settings.maxTokenLifetimeSeconds ?? DEFAULT_MAX_LIFETIME_SECONDS;
  const from = typeof payload.iat === 'number' ? payload.iat : Math.floor(now / 1000);
  if (typeof payload.exp === 'number' && payload.exp - from > max + settings.clockSkewSeconds) {
    return new EndUserTokenError('lifetime', `The end user’s token is valid for longer than this tenant allows (${max} s): ask the identity provider for shorter-lived tokens, or raise maxTokenLifetimeSeconds`);
  }
  return undefined;
}

/** Groups as providers give them: an array of names, or one space-separated string. */
function groupsOf(value: unknown, claim: string): string[] {
  if (value === undefined || value === null) return [];
  const list = typeof value === 'string' ? value.split(/\s+/).filter(Boolean) : value;
  if (!Array.isArray(list) || list.length > MAX_GROUPS || !list.every((g) => typeof g === 'string' && GROUP_NAME.test(g))) {
    throw new EndUserTokenError('groups_claim', `The end user’s token’s ${claim} claim is not a list of at most ${MAX_GROUPS} group names`);
  }
  return [...new Set(list as string[])];
}

/**
 * Who a request acts for: the verified user of `X-End-User-Token`, or else the trusted caller's
 * `context.userId` and `context.groups` (unverified) unless the tenant requires tokens; undefined
 * for nobody. A token given with a different `context.userId` is refused: one request, one person.
 */
export async function endUserOf(rt: Runtime, scope: TenantScope, given: { token?: string; userId?: string; groups?: string[] }): Promise<EndUser | undefined> {
  const token = given.token?.trim();
  if (token) {
    const settings = await endUserAuthOf(rt, scope);
    if (!settings) throw new EndUserTokenError('not_configured', 'An end user’s token was sent, but no end-user identity provider is configured (PUT /platform/end-user-auth)');
    const user = await verifyEndUserToken(rt, scope, settings, token);
    if (given.userId !== undefined && given.userId !== user.id) throw new EndUserTokenError('user_mismatch', 'context.userId is not the user the end user’s token names');
    return user;
  }
  if (given.userId === undefined) {
    if (given.groups?.length) throw new ValidationError('context.groups', 'needs context.userId (or an end user’s token): groups belong to a user');
    return undefined;
  }
  if ((await endUserAuthOf(rt, scope))?.required) throw new EndUserTokenError('required', 'This tenant requires an end user’s token (X-End-User-Token) with context.userId');
  return { id: given.userId, groups: [...new Set(given.groups ?? [])], verified: false };
}
