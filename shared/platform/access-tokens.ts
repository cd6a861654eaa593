import { createHmac } from 'node:crypto';
import { z } from 'zod';
import { scopeOf, TENANT_ID_PATTERN, type TenantScope } from '../tenancy';
import { sameSecret } from './platform-secrets';

/**
 * Platform access tokens: `cpt_v1.<payload>.<signature>`. The payload (base64url JSON) binds
 * tenant, schema, token id and issue time; the signature is HMAC-SHA256 over `cpt_v1.<payload>`
 * with the server's key, so no part can be changed without the key. Revocation is by token id.
 */
export interface TokenClaims {
  tenantId: string;
  schema: string;
  tokenId: string;
  /** Seconds since the epoch. */
  issuedAt: number;
  expiresAt?: number;
}

/** A verified token: its claims and the tenant scope they bind. */
export type PlatformToken = TokenClaims & { scope: TenantScope };

const PREFIX = 'cpt_v1.';
const TOKEN_SHAPE = /^cpt_v1\.([A-Za-z0-9_-]{10,1000})\.([A-Za-z0-9_-]{43})$/;

/** Built at the first token read, not at every start of the functions that import this. */
const payload = z.lazy(() =>
  z.strictObject({
    t: z.string().regex(TENANT_ID_PATTERN),
    s: z.string().min(1).max(100),
    j: z.string().regex(/^tok_[0-9a-z]{26}$/),
    i: z.int().nonnegative(),
    e: z.int().positive().optional(),
  }),
);

const sign = (key: string, body: string) => createHmac('sha256', key).update(PREFIX + body).digest('base64url');

export function issueToken(key: string, claims: TokenClaims): string {
  const body = Buffer.from(
    JSON.stringify({ t: claims.tenantId, s: claims.schema, j: claims.tokenId, i: claims.issuedAt, e: claims.expiresAt }),
  ).toString('base64url');
  return `${PREFIX}${body}.${sign(key, body)}`;
}

/**
 * The claims of a genuine, unexpired token whose schema is its tenant's, else undefined. The
 * signature is checked before the payload is even parsed.
 */
export function verifyToken(key: string, token: string, nowSeconds: number): PlatformToken | undefined {
  const [, body, signature] = TOKEN_SHAPE.exec(token) ?? [];
  if (body === undefined || signature === undefined) return undefined;
  if (!sameSecret(sign(key, body), signature)) return undefined;
  let parsed: z.infer<typeof payload>;
  try {
    parsed = payload.parse(JSON.parse(Buffer.from(body, 'base64url').toString('utf8')));
  } catch {
    return undefined;
  }
  if (parsed.e !== undefined && parsed.e <= nowSeconds) return undefined;
  const scope = scopeOf(parsed.t);
  if (scope.schema !== parsed.s) return undefined;
  return { tenantId: parsed.t, schema: parsed.s, tokenId: parsed.j, issuedAt: parsed.i, expiresAt: parsed.e, scope };
}
