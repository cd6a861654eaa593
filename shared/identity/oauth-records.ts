import { z } from '@hono/zod-openapi';
import { AppError } from '../errors';

/**
 * The OAuth records as the identity room stores them (a provider, a connection, an authorization
 * under way), each parsed when read back: the store keeps items as they are given, and what
 * comes back is checked against these shapes, never cast.
 */
const sealed = z.object({ v: z.literal(1), wrap: z.enum(['kms', 'local']), key: z.string(), iv: z.string(), tag: z.string(), data: z.string() });

export const providerRecord = z.object({
  name: z.string(),
  issuer: z.string().optional(),
  /** The issuer says it names itself in authorization responses (RFC 9207): a callback without `iss` is refused. */
  issParameterSupported: z.boolean().optional(),
  authorizationUrl: z.string(),
  tokenUrl: z.string(),
  revocationUrl: z.string().optional(),
  clientId: z.string(),
  sealedSecret: sealed.optional(),
  scopes: z.array(z.string()),
  extraAuthorizeParams: z.record(z.string(), z.string()).optional(),
  redirectUri: z.string().optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type StoredOAuthProvider = z.infer<typeof providerRecord>;

export const connectionRecord = z.object({
  userId: z.string(),
  provider: z.string(),
  scopes: z.array(z.string()),
  connectedAt: z.string(),
  refreshedAt: z.string().optional(),
  /** When the access token expires, epoch ms; absent when the provider gave no lifetime. (Not `expiresAt`: that name is the table's TTL.) */
  accessExpiresAt: z.number().optional(),
  sealedAccess: sealed,
  sealedRefresh: sealed.optional(),
  version: z.number(),
  refreshingUntil: z.number().optional(),
});
export type StoredConnection = z.infer<typeof connectionRecord>;

/** What waits for an authorization: a paused turn of a session (and the run it belongs to). */
export const waiterRecord = z.object({ agentId: z.string(), sessionId: z.string(), runId: z.string().optional() });
export type AuthorizationWaiter = z.infer<typeof waiterRecord>;

export const stateRecord = z.object({
  tenantId: z.string(),
  userId: z.string(),
  provider: z.string(),
  scopes: z.array(z.string()),
  sealedVerifier: sealed,
  redirectUri: z.string(),
  redirectAfter: z.string().optional(),
  waiter: waiterRecord.optional(),
  /** Epoch seconds (the table's TTL removes it). */
  expiresAt: z.number(),
});
export type StoredState = z.infer<typeof stateRecord>;

/** A record read back, checked against its shape (undefined stays undefined); one that does not fit is a 500 that names the kind. */
export function readRecord<T>(shape: z.ZodType<T>, item: Record<string, unknown> | undefined, kind: string): T | undefined {
  if (item === undefined) return undefined;
  const parsed = shape.safeParse(item);
  if (!parsed.success) throw new AppError('INTERNAL_ERROR', `A stored ${kind} does not have the shape it was written with`, undefined, { cause: parsed.error });
  return parsed.data;
}
