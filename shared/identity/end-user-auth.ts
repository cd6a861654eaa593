import { z } from '@hono/zod-openapi';
import { ValidationError } from '../errors';
import { allowedByName, endpointOf } from '../net/outbound';
import type { Runtime } from '../runtime';
import type { SealedSecret } from '../secrets/secret-box';
import type { TenantScope } from '../tenancy';

/**
 * A tenant's end users' identity provider: whose tokens (`X-End-User-Token`) Cairn verifies, with
 * which keys (a JWKS URL, an inline JWKS, or a shared HS256 secret, sealed and never returned), and
 * which claims name the user and their groups. Read once per 30 s per warm instance.
 */
/** A token valid for longer than this is refused unless the tenant allows longer. */
export const DEFAULT_MAX_LIFETIME_SECONDS = 86_400;
/** JWK members that hold private or symmetric key material (RFC 7518 §6). */
const PRIVATE_KEY_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth'];
const claimPath = z.string().regex(/^[A-Za-z0-9_:/.-]{1,200}$/, { error: 'must be a claim name (a dotted path for a nested claim), 1–200 characters' });
const audience = z.string().min(1).max(500);

export const endUserAuthInput = z
  .strictObject({
    issuer: z.string().min(1).max(500).describe('The tokens’ `iss`, exactly'),
    audience: z.union([audience, z.array(audience).min(1).max(10)]).describe('The `aud` a token must carry (one of these)'),
    jwksUri: z.url({ protocol: /^https?$/ }).max(2000).optional().describe('Where the provider publishes its signing keys (fetched through the outbound guard, kept 10 minutes, fetched again for a key id it does not hold)'),
    jwks: z.strictObject({ keys: z.array(z.record(z.string(), z.unknown())).min(1).max(20) }).optional().describe('The signing keys themselves'),
    hs256Secret: z.string().min(32).max(4096).optional().describe('A shared HS256 secret (at least 32 characters): sealed, never returned. Left out on a later PUT, the stored one is kept'),
    userIdClaim: claimPath.default('sub'),
    groupsClaim: claimPath.default('groups'),
    required: z.boolean().default(false).describe('true: a `context.userId` without a token is refused (401)'),
    clockSkewSeconds: z.int().min(0).max(600).default(60),
    maxTokenLifetimeSeconds: z
      .int()
      .min(60)
      .max(30 * 86_400)
      .default(DEFAULT_MAX_LIFETIME_SECONDS)
      .describe('The longest a token may be valid for (from its iat, or from now without one): a longer-lived token is refused (401, reason lifetime). Tokens must carry exp'),
  })
  .superRefine((body, ctx) => {
    const given = (['jwksUri', 'jwks', 'hs256Secret'] as const).filter((k) => body[k] !== undefined);
    if (given.length > 1) ctx.addIssue({ code: 'custom', path: [given[1]!], message: `must not be given with ${given[0]}: one source of keys` });
    // Signing keys are public: a private or symmetric key here would be stored in the clear and answered by GET.
    body.jwks?.keys.forEach((key, i) => {
      const secret = PRIVATE_KEY_MEMBERS.filter((member) => member in key);
      if (secret.length > 0) ctx.addIssue({ code: 'custom', path: ['jwks', 'keys', i], message: `holds private key material (${secret.join(', ')}): give the public keys only (a shared secret goes in hs256Secret)` });
    });
  })
  .openapi('EndUserAuthInput', { example: { issuer: 'https://login.example.com/', audience: 'cairn', jwksUri: 'https://login.example.com/.well-known/jwks.json', groupsClaim: 'groups' } });
export type EndUserAuthInput = z.infer<typeof endUserAuthInput>;

export interface StoredEndUserAuth {
  issuer: string;
  audience: string | string[];
  jwksUri?: string;
  jwks?: { keys: Array<Record<string, unknown>> };
  sealedSecret?: SealedSecret;
  userIdClaim: string;
  groupsClaim: string;
  required: boolean;
  clockSkewSeconds: number;
  /** Absent on settings stored before it existed: the default. */
  maxTokenLifetimeSeconds?: number;
  updatedAt: string;
}

export const endUserAuthShown = z.object({
  issuer: z.string(),
  audience: z.union([z.string(), z.array(z.string())]),
  keys: z.enum(['jwksUri', 'jwks', 'hs256Secret']).describe('Where the signing keys come from'),
  jwksUri: z.string().optional(),
  jwks: z.object({ keys: z.array(z.record(z.string(), z.unknown())) }).optional(),
  userIdClaim: z.string(),
  groupsClaim: z.string(),
  required: z.boolean(),
  clockSkewSeconds: z.int(),
  maxTokenLifetimeSeconds: z.int(),
  updatedAt: z.string(),
}).openapi('EndUserAuth');

const sealContext = (scope: TenantScope) => ({ tenantId: scope.tenantId, purpose: 'end-user-auth' });
const cacheKey = (scope: TenantScope) => `${scope.tenantId}#${scope.schema}`;

export function showEndUserAuth(stored: StoredEndUserAuth): z.infer<typeof endUserAuthShown> {
  const { sealedSecret, jwksUri, jwks, ...rest } = stored;
  return { ...rest, maxTokenLifetimeSeconds: rest.maxTokenLifetimeSeconds ?? DEFAULT_MAX_LIFETIME_SECONDS, keys: sealedSecret ? 'hs256Secret' : jwksUri ? 'jwksUri' : 'jwks', ...(jwksUri ? { jwksUri } : {}), ...(jwks ? { jwks } : {}) };
}

/** The tenant's settings, or undefined: this instance reads them at most once per 30 s. */
export async function endUserAuthOf(rt: Runtime, scope: TenantScope): Promise<StoredEndUserAuth | undefined> {
  const cached = rt.caches.endUserAuth.get(cacheKey(scope)) as { value?: StoredEndUserAuth } | undefined;
  if (cached) return cached.value;
  const value = (await rt.store.tenantSettings.getEndUserAuth(scope)) as StoredEndUserAuth | undefined;
  rt.caches.endUserAuth.set(cacheKey(scope), { value });
  return value;
}

/** Sets the tenant's settings: the HS256 secret sealed (or the stored one kept when left out). */
export async function setEndUserAuth(rt: Runtime, scope: TenantScope, input: EndUserAuthInput): Promise<StoredEndUserAuth> {
  const { hs256Secret, jwksUri, jwks, ...rest } = input;
  // Keys fetched over plain HTTP could be swapped on the way: https, unless the operator allowed the host (a test or on-premises provider).
  const plain = jwksUri && new URL(jwksUri).protocol === 'http:' ? endpointOf(jwksUri) : undefined;
  if (plain && !allowedByName(plain.host, plain.port, rt.outbound)) {
    throw new ValidationError('jwksUri', `must be an https URL (http only for a host the operator allows in TOOL_ALLOWED_HOSTS)`);
  }
  let sealedSecret: SealedSecret | undefined;
  if (hs256Secret !== undefined) sealedSecret = await rt.secrets.seal(hs256Secret, sealContext(scope));
  else if (jwksUri === undefined && jwks === undefined) {
    sealedSecret = (await rt.store.tenantSettings.getEndUserAuth(scope) as StoredEndUserAuth | undefined)?.sealedSecret;
    if (!sealedSecret) throw new ValidationError('jwksUri', 'is required: one of jwksUri, jwks or hs256Secret gives the keys tokens are verified with');
  }
  const stored: StoredEndUserAuth = { ...rest, ...(jwksUri ? { jwksUri } : {}), ...(jwks ? { jwks } : {}), ...(sealedSecret ? { sealedSecret } : {}), updatedAt: new Date(rt.clock.now()).toISOString() };
  await rt.store.tenantSettings.setEndUserAuth(scope, stored);
  rt.caches.endUserAuth.forget(cacheKey(scope));
  return stored;
}

export async function removeEndUserAuth(rt: Runtime, scope: TenantScope): Promise<boolean> {
  const removed = await rt.store.tenantSettings.setEndUserAuth(scope, null);
  rt.caches.endUserAuth.forget(cacheKey(scope));
  return removed;
}

/** The HS256 secret, opened for one verification. */
export const openHs256Secret = (rt: Runtime, scope: TenantScope, sealed: SealedSecret) => rt.secrets.open(sealed, sealContext(scope));
