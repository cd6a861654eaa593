import { z } from '@hono/zod-openapi';
import { ToolFailure, ValidationError } from '../errors';
import type { Runtime } from '../runtime';
import type { SealedSecret } from '../secrets/secret-box';
import type { TenantScope } from '../tenancy';

/**
 * The auth of tools that call out (http, openapi, mcp): bearer, a header, or basic. The secret is
 * sealed before it is stored and never returned: a response shows `{type, configured: true}`, and a
 * client that sends back what it read (no secret) keeps the stored one. `configured: false` with no
 * secret stores none on purpose (an import whose secret was not given): an agent's model is not
 * given the tool, and a call fails, until one is set.
 */
export const authInput = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('bearer'), token: z.string().min(1).max(4096).optional(), configured: z.boolean().optional() }),
  z.strictObject({ type: z.literal('header'), name: z.string().regex(/^[A-Za-z0-9-]{1,100}$/), value: z.string().min(1).max(4096).optional(), configured: z.boolean().optional() }),
  z.strictObject({ type: z.literal('basic'), username: z.string().min(1).max(200), password: z.string().min(1).max(4096).optional(), configured: z.boolean().optional() }),
]);
export type AuthInput = z.infer<typeof authInput>;

/** Auth as stored: the secret sealed (none while it is not configured). */
export type StoredAuth = { type: AuthInput['type']; name?: string; username?: string; sealed?: SealedSecret };

/** Auth as responses show it. */
export const authShown = z.object({
  type: z.enum(['bearer', 'header', 'basic']),
  name: z.string().optional(),
  username: z.string().optional(),
  configured: z.boolean().openapi({ description: 'Whether a secret is stored; false: the tool is not usable until one is set' }),
});

/** Whether the auth can be used: a secret is stored for it. */
export const hasSecret = (auth: StoredAuth | undefined) => !auth || auth.sealed !== undefined;

const sealContext = (scope: TenantScope, tool: string) => ({ tenantId: scope.tenantId, tool, purpose: 'agent-tool-auth' });
const secretOf = (auth: AuthInput) => (auth.type === 'bearer' ? auth.token : auth.type === 'header' ? auth.value : auth.password);

/**
 * Seals a request's secret, or keeps the stored one (`kept`) when the request leaves it out.
 * `tool` binds the secret to its owner (an agent's tool name, a workflow step); `path` names the
 * auth field in errors.
 */
export async function sealAuth(rt: Runtime, scope: TenantScope, tool: string, auth: AuthInput, kept: StoredAuth | undefined, path: string): Promise<StoredAuth> {
  const secret = secretOf(auth);
  let sealed: SealedSecret | undefined;
  if (secret !== undefined) sealed = await rt.secrets.seal(secret, sealContext(scope, tool));
  else if (auth.configured === false) sealed = undefined;
  else if (kept?.sealed && kept.type === auth.type) sealed = kept.sealed;
  else {
    const field = auth.type === 'bearer' ? 'token' : auth.type === 'header' ? 'value' : 'password';
    throw new ValidationError(`${path}.${field}`, 'is required (no secret is stored for it yet; configured: false stores none, and the tool stays unusable)');
  }
  return { type: auth.type, ...(auth.type === 'header' ? { name: auth.name } : {}), ...(auth.type === 'basic' ? { username: auth.username } : {}), ...(sealed ? { sealed } : {}) };
}

/** Auth as responses show it: never a secret, sealed or (a definition only compiled, not stored) in clear. */
export function showAuth(auth: StoredAuth | AuthInput): z.infer<typeof authShown> {
  const { sealed, token: _token, value: _value, password: _password, configured, ...shown } = auth as StoredAuth & { token?: string; value?: string; password?: string; configured?: boolean };
  return { ...shown, configured: sealed !== undefined || secretOf(auth as AuthInput) !== undefined || configured === true };
}

/** The request headers a stored auth adds, its secret opened for this call only. */
export async function authHeaders(rt: Runtime, scope: TenantScope, tool: string, auth: StoredAuth | undefined): Promise<Record<string, string>> {
  if (!auth) return {};
  if (!auth.sealed) throw new ToolFailure(`The ${auth.type} auth has no secret (configured: false): set one before the tool is called`, { retryable: false });
  const secret = await rt.secrets.open(auth.sealed, sealContext(scope, tool));
  if (auth.type === 'bearer') return { authorization: `Bearer ${secret}` };
  if (auth.type === 'header') return { [auth.name!.toLowerCase()]: secret };
  return { authorization: `Basic ${Buffer.from(`${auth.username}:${secret}`).toString('base64')}` };
}
