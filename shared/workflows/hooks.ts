import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from '@hono/zod-openapi';
import { AppError, ConflictError, NotFoundError, ValidationError } from '../errors';
import { aliasName } from '../releases';
import { isId, newId } from '../ids';
import type { Runtime } from '../runtime';
import type { SealedSecret } from '../secrets/secret-box';
import type { ApiKeyIdentity } from '../store/api-keys';
import type { HookRecord } from '../store/hooks';
import { scopeOf, type TenantScope } from '../tenancy';
import { startExecution } from './executions';
import { signatureOf } from './webhooks';
import { storedWorkflow, workflows } from './workflow-records';

/**
 * Inbound hooks: a URL that starts a workflow when a service (a form, a shop, GitHub) POSTs to it,
 * without an API key. Authenticated by a secret token in the path (`/v1/hooks/{id}/{token}`), or by
 * a signature of the body (`Cairn-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">`,
 * the scheme of Cairn's own webhooks, within 5 minutes). The body becomes the execution's input:
 * a JSON object is its `parameters` (and its string `input`, if any, the input); any other body
 * is the input as text. Answered 202 with the execution, which runs in the background.
 */
export const hookInput = z
  .strictObject({
    name: z.string().trim().min(1).max(200).default('hook'),
    auth: z.enum(['token', 'signature']).default('token').openapi({ description: 'token: the secret is in the URL; signature: callers sign each body with the secret' }),
    alias: aliasName.optional().openapi({ description: 'Run the version this alias of the workflow routes to (each call placed by weight); without it, the draft' }),
  })
  .openapi('HookInput', { example: { name: 'shop orders', auth: 'signature' } });

export const hookOutput = z
  .object({
    id: z.string().openapi({ example: 'hk_01jd8x2k3m4n5p6q7r8s9t0v1w' }),
    workflowId: z.string(),
    name: z.string(),
    auth: z.enum(['token', 'signature']),
    alias: z.string().optional().openapi({ description: 'The workflow alias it runs (else the draft)' }),
    url: z.string().openapi({ description: 'Where to POST (a token hook’s includes its token: keep it secret)' }),
    secret: z.string().optional().openapi({ description: 'Shown once, when the hook is made: the token, or the signing secret' }),
    createdAt: z.string(),
  })
  .openapi('Hook');

const SIGNATURE_TOLERANCE_SECONDS = 300;
const sealContext = (scope: TenantScope) => ({ tenantId: scope.tenantId, tool: 'hook', purpose: 'workflow-hook' });
const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');
const urlOf = (hook: { id: string; auth: string }, token?: string) => `/v1/hooks/${hook.id}${hook.auth === 'token' && token ? `/${token}` : ''}`;

export async function createHook(rt: Runtime, scope: TenantScope, workflowId: string, input: z.infer<typeof hookInput>, identity: ApiKeyIdentity) {
  await workflows.get(rt, scope, workflowId);
  if (input.alias && !(await rt.store.releases.of('WORKFLOW', storedWorkflow).getAlias(scope, workflowId, input.alias))) {
    throw new ValidationError('alias', `names ${input.alias}, which is not an alias of workflow ${workflowId}`);
  }
  const secret = `chs_${randomBytes(24).toString('base64url')}`;
  const hook: HookRecord = {
    id: newId('hook', rt.clock.now()),
    tenantId: scope.tenantId,
    schema: scope.schema,
    workflowId,
    name: input.name,
    auth: input.auth,
    ...(input.alias ? { alias: input.alias } : {}),
    ...(input.auth === 'token' ? { tokenHash: hashOf(secret) } : { sealed: await rt.secrets.seal(secret, sealContext(scope)) }),
    plan: identity.plan,
    createdAt: new Date(rt.clock.now()).toISOString(),
  };
  await rt.store.hooks.putHook(scope, hook);
  return { id: hook.id, workflowId, name: hook.name, auth: hook.auth, ...(hook.alias ? { alias: hook.alias } : {}), url: urlOf(hook, secret), secret, createdAt: hook.createdAt };
}

export async function listHooks(rt: Runtime, scope: TenantScope, workflowId: string) {
  await workflows.get(rt, scope, workflowId);
  return (await rt.store.hooks.listHooks(scope, workflowId)).map((h) => ({ ...h, workflowId, url: urlOf(h) }));
}

export async function deleteHook(rt: Runtime, scope: TenantScope, workflowId: string, hookId: string) {
  const hook = isId('hook', hookId) ? await rt.store.hooks.getHook(hookId) : undefined;
  if (!hook || hook.tenantId !== scope.tenantId || hook.workflowId !== workflowId) throw new NotFoundError('hook', hookId);
  await rt.store.hooks.deleteHook(scope, workflowId, hookId);
}

/** The signature of a valid `Cairn-Signature` header (`t=…,v1=<64 hex digits>`, nothing else in v1), else undefined. */
function validSignature(header: string | undefined, body: string, secret: string, nowSeconds: number): string | undefined {
  const parts = Object.fromEntries((header ?? '').split(',').map((p) => p.trim().split('=') as [string, string]));
  const t = Number(parts.t);
  // The exact length: Buffer's hex parser stops at the first non-hex character and would accept the rest.
  if (!Number.isInteger(t) || !/^[0-9a-f]{64}$/i.test(parts.v1 ?? '') || Math.abs(nowSeconds - t) > SIGNATURE_TOLERANCE_SECONDS) return undefined;
  const expected = signatureOf(secret, t, body);
  return timingSafeEqual(Buffer.from(parts.v1!, 'hex'), expected) ? `${t}.${parts.v1!.toLowerCase()}` : undefined;
}

/** The hook's id in a request's path, and its token when the path carries one. */
export function hookPath(path: string): { id: string; token?: string } | undefined {
  const match = /^\/v1\/hooks\/([^/]+)(?:\/([^/]+))?\/?$/.exec(path);
  return match ? { id: match[1]!, token: match[2] } : undefined;
}

/**
 * Authenticates a hook's request in place of an API key: the token, or the body's signature. Unknown
 * hooks and wrong credentials answer alike (401), so a URL does not tell whether a hook exists. The
 * identity is the hook's (its requests are rate-limited at the plan of the key that made it).
 */
export async function authenticateHook(rt: Runtime, request: { path: string; signature?: string; body: () => Promise<string> }): Promise<{ identity: ApiKeyIdentity; hook: { id: string; workflowId: string; alias?: string; replayKey?: string } }> {
  const refused = new AppError('UNAUTHORIZED', 'Unknown hook, or a wrong token or signature');
  const path = hookPath(request.path);
  const hook = path && isId('hook', path.id) ? await rt.store.hooks.getHook(path.id) : undefined;
  if (!path || !hook) throw refused;
  const scope = scopeOf(hook.tenantId);
  if (hook.auth === 'token') {
    const given = Buffer.from(hashOf(path.token ?? ''), 'hex');
    if (!path.token || !timingSafeEqual(given, Buffer.from(hook.tokenHash!, 'hex'))) throw refused;
  } else {
    const secret = await rt.secrets.open(hook.sealed as SealedSecret, sealContext(scope));
    const signature = validSignature(request.signature, await request.body(), secret, Math.floor(rt.clock.now() / 1000));
    if (!signature) throw refused;
    // A signed request sent again within the tolerance is a replay: it gets the first one's execution.
    return { identity: { keyId: `hook:${hook.id}`, scope, plan: hook.plan }, hook: { id: hook.id, workflowId: hook.workflowId, alias: hook.alias, replayKey: `signature:${signature}` } };
  }
  return { identity: { keyId: `hook:${hook.id}`, scope, plan: hook.plan }, hook: { id: hook.id, workflowId: hook.workflowId, alias: hook.alias } };
}

/** What a hook's body starts: a JSON object's fields as parameters (its string `input` as the input), anything else as the input. */
export function executionInputOf(body: string): { input: string; parameters: Record<string, unknown> } {
  let parsed: unknown;
  try {
    parsed = body.trim() === '' ? {} : JSON.parse(body);
  } catch {
    return { input: body.slice(0, 100_000), parameters: {} };
  }
  if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
    const fields = parsed as Record<string, unknown>;
    return { input: typeof fields.input === 'string' ? fields.input.slice(0, 100_000) : '', parameters: fields };
  }
  return { input: body.slice(0, 100_000), parameters: {} };
}

/**
 * The hook's body is what its execution stores as parameters and input: a refusal naming those
 * (too large, nested too deep once stored) names the body, or its field as validation names a
 * body's fields (`order.items`).
 */
function namingTheBody(error: unknown): unknown {
  const field = error instanceof AppError ? error.details?.field : undefined;
  if (!(error instanceof AppError) || typeof field !== 'string' || !/^(parameters|input)\b/.test(field)) return error;
  const renamed = field.replace(/^(parameters|input)\.?/, '') || 'body';
  return new AppError(error.code, error.message.replace(field, renamed), { ...error.details, field: renamed }, { cause: error });
}

/**
 * Starts the hook's workflow with the body. With an Idempotency-Key, a sender's retry of the same
 * body gets the first call's execution (`replayed`); the same key with another body is a 409.
 */
export async function receiveHook(rt: Runtime, scope: TenantScope, hook: { id: string; workflowId: string; alias?: string }, body: string, idempotencyKey?: string) {
  const start = () =>
    startExecution(rt, scope, hook.workflowId, { ...executionInputOf(body), keyId: `hook:${hook.id}`, target: { alias: hook.alias } }).catch((error: unknown) => {
      throw namingTheBody(error);
    });
  if (!idempotencyKey) return { execution: await start(), replayed: false };
  const requestHash = hashOf(body);
  const first = await rt.store.hooks.claimCall(hook.id, idempotencyKey, requestHash);
  if (first) {
    if (first.requestHash !== requestHash) throw new ConflictError('Idempotency-Key was already used with a different body', { field: 'Idempotency-Key' });
    if (!first.executionId) throw new ConflictError('A call with this Idempotency-Key is still being started; send it again shortly', { field: 'Idempotency-Key' });
    const execution = await rt.store.executions.getExecution(scope, hook.workflowId, first.executionId);
    if (!execution) throw new NotFoundError('execution', first.executionId);
    return { execution, replayed: true };
  }
  try {
    const execution = await start();
    await rt.store.hooks.recordCall(hook.id, idempotencyKey, execution.id);
    return { execution, replayed: false };
  } catch (error) {
    await rt.store.hooks.releaseCall(hook.id, idempotencyKey);
    throw error;
  }
}
