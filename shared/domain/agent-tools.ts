import { z } from '@hono/zod-openapi';
import { ValidationError } from '../errors';
import { isId } from '../ids';
import type { SealedSecret } from '../secrets/secret-box';
import type { Runtime } from '../runtime';
import type { TenantScope } from '../tenancy';

/**
 * The tools an agent may call. `http` calls a URL the tenant gives (through the outbound guard),
 * `knowledge_search` searches the agent's sources when the model decides to, `workflow` runs one of
 * the tenant's workflows. A tool's auth secret is sealed before it is stored and never returned:
 * a response shows `{type, configured: true}`, and sending that back keeps the stored secret.
 */
export const TOOL_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
export const MAX_AGENT_TOOLS = 32;
/** `{{name}}` placeholders of an http tool: each names one of its parameters. */
export const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

const name = z.string().regex(TOOL_NAME_PATTERN, { error: 'must start with a letter and hold only letters, digits, _ or - (≤ 64)' });
const description = z.string().trim().min(1).max(2000);
const requireApproval = z.boolean().default(false).openapi({ description: 'Pause the turn for a person to approve each call' });

/** Refuses a JSON Schema zod cannot turn into a check: values against it could not be checked. */
const checkable =
  (what: string) =>
  (schema: Record<string, unknown>, ctx: z.RefinementCtx): void => {
    try {
      z.fromJSONSchema(schema);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: `is not a JSON Schema this server can check ${what} with: ${(error as Error).message}` });
    }
  };

/** A JSON Schema object describing the tool's arguments (what models are given). */
const parameters = z
  .looseObject({
    type: z.literal('object', { error: 'must be object: a tool takes named arguments' }),
    properties: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
    required: z.array(z.string()).optional(),
  })
  .superRefine((schema, ctx) => {
    checkable('arguments')(schema, ctx);
    for (const [i, key] of (schema.required ?? []).entries()) {
      if (!(key in (schema.properties ?? {}))) ctx.addIssue({ code: 'custom', path: ['required', i], message: `names ${key}, which is not in properties` });
    }
  })
  .default({ type: 'object', properties: {} })
  .openapi({ description: 'JSON Schema (type object) of the arguments', example: { type: 'object', properties: { orderId: { type: 'string', pattern: '^[0-9]+$' } }, required: ['orderId'] } });

/** Auth as a request gives it: the secret fields may be left out to keep the stored ones. */
const authInput = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('bearer'), token: z.string().min(1).max(4096).optional(), configured: z.boolean().optional() }),
  z.strictObject({ type: z.literal('header'), name: z.string().regex(/^[A-Za-z0-9-]{1,100}$/), value: z.string().min(1).max(4096).optional(), configured: z.boolean().optional() }),
  z.strictObject({ type: z.literal('basic'), username: z.string().min(1).max(200), password: z.string().min(1).max(4096).optional(), configured: z.boolean().optional() }),
]);

const httpTool = z.strictObject({
  type: z.literal('http'),
  name,
  description,
  parameters,
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).default('GET'),
  url: z.string().min(1).max(4000).openapi({ example: 'https://shop.example/orders/{{orderId}}', description: '{{name}} places a parameter (URL-encoded)' }),
  headers: z.record(z.string().regex(/^[A-Za-z0-9-]{1,100}$/), z.string().max(4000)).optional(),
  body: z.unknown().optional().openapi({ description: 'JSON; a string "{{name}}" is replaced by the argument, other strings interpolate. Without it, a POST/PUT/PATCH sends the arguments' }),
  auth: authInput.optional(),
  requireApproval,
});

const knowledgeSearchTool = z.strictObject({
  type: z.literal('knowledge_search'),
  name: name.default('search_knowledge'),
  description: description.default('Searches the knowledge sources of this agent; give it a query.'),
  requireApproval,
});

const workflowTool = z.strictObject({
  type: z.literal('workflow'),
  name,
  description,
  workflowId: z.string().refine((id) => isId('workflow', id), { error: 'must be a workflow id (wf_…)' }),
  requireApproval,
});

function placeholdersOf(value: unknown): string[] {
  if (typeof value === 'string') return [...value.matchAll(PLACEHOLDER)].map((m) => m[1]!);
  if (Array.isArray(value)) return value.flatMap(placeholdersOf);
  if (value && typeof value === 'object') return Object.values(value).flatMap(placeholdersOf);
  return [];
}

export const toolInput = z.discriminatedUnion('type', [httpTool, knowledgeSearchTool, workflowTool]).superRefine((tool, ctx) => {
  if (tool.type !== 'http') return;
  const declared = new Set(Object.keys(tool.parameters.properties ?? {}));
  const check = (value: unknown, path: Array<string | number>) => {
    for (const placeholder of placeholdersOf(value)) {
      if (!declared.has(placeholder)) ctx.addIssue({ code: 'custom', path, message: `places {{${placeholder}}}, which is not one of the tool's parameters` });
    }
  };
  check(tool.url, ['url']);
  for (const [header, value] of Object.entries(tool.headers ?? {})) check(value, ['headers', header]);
  check(tool.body, ['body']);
  let url: URL | undefined;
  try {
    url = new URL(tool.url.replace(PLACEHOLDER, 'x'));
  } catch {
    /* reported below */
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) ctx.addIssue({ code: 'custom', path: ['url'], message: 'must be an http or https URL' });
});

export const toolsInput = z
  .array(toolInput)
  .max(MAX_AGENT_TOOLS)
  .superRefine((tools, ctx) => {
    const seen = new Map<string, number>();
    tools.forEach((tool, i) => {
      const first = seen.get(tool.name);
      if (first !== undefined) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `repeats the tool name at index ${first}` });
      else seen.set(tool.name, i);
    });
  })
  .default([])
  .openapi({ description: 'Tools the agent may call (http, knowledge_search, workflow)' });

export type ToolInput = z.infer<typeof toolInput>;

/** A JSON Schema this server can check values against (tool arguments, structured replies). */
export const checkableSchema = z.record(z.string(), z.unknown()).superRefine(checkable('replies'));

/** `responseFormat` of a turn: JSON, or JSON matching a schema. */
export const responseFormatInput = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('json_object') }),
    z.strictObject({ type: z.literal('json_schema'), name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/).default('reply'), schema: checkableSchema }),
  ])
  .openapi('ResponseFormat', { description: 'The reply must be JSON (json_object) or JSON matching a JSON Schema (json_schema); it is checked, one repair is asked for, else 502' });
type AuthInput = NonNullable<Extract<ToolInput, { type: 'http' }>['auth']>;

/** Auth as stored: the secret sealed. */
export type StoredAuth = { type: AuthInput['type']; name?: string; username?: string; sealed: SealedSecret };
export type StoredTool = Exclude<ToolInput, { type: 'http' }> | (Omit<Extract<ToolInput, { type: 'http' }>, 'auth'> & { auth?: StoredAuth });

/** Auth as responses show it. */
const authShown = z.object({ type: z.enum(['bearer', 'header', 'basic']), name: z.string().optional(), username: z.string().optional(), configured: z.literal(true) });
export const toolOutput = z.union([httpTool.extend({ auth: authShown.optional() }), knowledgeSearchTool, workflowTool]);

const sealContext = (scope: TenantScope, tool: string) => ({ tenantId: scope.tenantId, tool, purpose: 'agent-tool-auth' });
const secretOf = (auth: AuthInput) => (auth.type === 'bearer' ? auth.token : auth.type === 'header' ? auth.value : auth.password);

/**
 * Seals the secrets a request gives; a tool whose auth comes without its secret keeps the one
 * stored for the tool of that name (a client that sends back what it read changes nothing).
 */
export async function sealTools(rt: Runtime, scope: TenantScope, tools: ToolInput[], current: StoredTool[] = []): Promise<StoredTool[]> {
  return Promise.all(
    tools.map(async (tool, i): Promise<StoredTool> => {
      if (tool.type !== 'http' || !tool.auth) return tool as StoredTool;
      const { auth, ...rest } = tool;
      const secret = secretOf(auth);
      const kept = current.find((c) => c.name === tool.name && c.type === 'http') as Extract<StoredTool, { type: 'http' }> | undefined;
      let sealed: SealedSecret;
      if (secret !== undefined) sealed = await rt.secrets.seal(secret, sealContext(scope, tool.name));
      else if (kept?.auth && kept.auth.type === auth.type) sealed = kept.auth.sealed;
      else {
        const field = auth.type === 'bearer' ? 'token' : auth.type === 'header' ? 'value' : 'password';
        throw new ValidationError(`tools[${i}].auth.${field}`, 'is required (no secret is stored for this tool yet)');
      }
      return { ...rest, auth: { type: auth.type, ...(auth.type === 'header' ? { name: auth.name } : {}), ...(auth.type === 'basic' ? { username: auth.username } : {}), sealed } };
    }),
  );
}

/** The secret of a stored tool's auth, for the call only. */
export function openToolSecret(rt: Runtime, scope: TenantScope, tool: string, auth: StoredAuth): Promise<string> {
  return rt.secrets.open(auth.sealed, sealContext(scope, tool));
}

/** Tools as responses show them: no sealed secret, `configured: true` in its place. */
export function presentTools(tools: StoredTool[] | undefined): Array<z.infer<typeof toolOutput>> {
  return (tools ?? []).map((tool) => {
    if (tool.type !== 'http' || !tool.auth) return tool as z.infer<typeof toolOutput>;
    const { sealed: _sealed, ...auth } = tool.auth;
    return { ...tool, auth: { ...auth, configured: true as const } };
  });
}
