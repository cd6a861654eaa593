import { z } from '@hono/zod-openapi';
import { ValidationError } from '../errors';
import type { Runtime } from '../runtime';
import type { SealedSecret } from '../secrets/secret-box';
import type { TenantScope } from '../tenancy';

/**
 * The auth of tools that call out (http, openapi, mcp): bearer, a header, or basic. The secret is
 * sealed before it is stored and never returned: a response shows `{type, configured: true}`, and a
 * client that sends back what it read (no secret) keeps the stored one.
 */
export const authInput = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('bearer'), token: z.string().min(1).max(4096).optional(), configured: z.boolean().optional() }),
  z.strictObject({ type: z.literal('header'), name: z.string().regex(/^[A-Za-z0-9-]{1,100}$/), value: z.string().min(1).max(4096).optional(), configured: z.boolean().optional() }),
  z.strictObject({ type: z.literal('basic'), username: z.string().min(1).max(200), password: z.string().min(1).max(4096).optional(), configured: z.boolean().optional() }),
]);
export type AuthInput = z.infer<typeof authInput>;

/** Auth as stored: the secret sealed. */
export type StoredAuth = { type: AuthInput['type']; name?: string; username?: string; sealed: SealedSecret };

/** Auth as responses show it. */
export const authShown = z.object({ type: z.enum(['bearer', 'header', 'basic']), name: z.string().optional(), username: z.string().optional(), configured: z.literal(true) });

const sealContext = (scope: TenantScope, tool: string) => ({ tenantId: scope.tenantId, tool, purpose: 'agent-tool-auth' });
const secretOf = (auth: AuthInput) => (auth.type === 'bearer' ? auth.token : auth.type === 'header' ? auth.value : auth.password);

/**
 * Seals a request's secret, or keeps the stored one (`kept`) when the request leaves it out.
 * `tool` binds the secret to its owner (an agent's tool name, a workflow step); `path` names the
 * auth field in errors.
 */
export async function sealAuth(rt: Runtime, scope: TenantScope, tool: string, auth: AuthInput, kept: StoredAuth | undefined, path: string): Promise<StoredAuth> {
  const secret = secretOf(auth);
  let sealed: SealedSecret;
  if (secret !== undefined) sealed = await rt.secrets.seal(secret, sealContext(scope, tool));
  else if (kept && kept.type === auth.type) sealed = kept.sealed;
  else {
    const field = auth.type === 'bearer' ? 'token' : auth.type === 'header' ? 'value' : 'password';
    throw new ValidationError(`${path}.${field}`, 'is required (no secret is stored for it yet)');
  }
  return { type: auth.type, ...(auth.type === 'header' ? { name: auth.name } : {}), ...(auth.type === 'basic' ? { username: auth.username } : {}), sealed };
}

/** Auth as responses show it: never a secret, sealed or (a definition only compiled, not stored) in clear. */
export function showAuth(auth: StoredAuth | AuthInput): z.infer<typeof authShown> {
  const { sealed: _sealed, token: _token, value: _value, password: _password, configured: _configured, ...shown } = auth as StoredAuth & { token?: string; value?: string; password?: string; configured?: boolean };
  return { ...shown, configured: true };
}

/** The request headers a stored auth adds, its secret opened for this call only. */
export async function authHeaders(rt: Runtime, scope: TenantScope, tool: string, auth: StoredAuth | undefined): Promise<Record<string, string>> {
  if (!auth) return {};
  const secret = await rt.secrets.open(auth.sealed, sealContext(scope, tool));
  if (auth.type === 'bearer') return { authorization: `Bearer ${secret}` };
  if (auth.type === 'header') return { [auth.name!.toLowerCase()]: secret };
  return { authorization: `Basic ${Buffer.from(`${auth.username}:${secret}`).toString('base64')}` };
}
