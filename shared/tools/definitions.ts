import { z } from '@hono/zod-openapi';
import { quote } from '../errors';
import { isId } from '../ids';
import { checkable, httpUrl } from '../schema-helpers';
import { authInput, authShown, type StoredAuth } from './tool-auth';
import { policyInput, policyIssues, type PolicyRule, type PolicyScope } from './tool-policy';

/**
 * What an agent's tool definitions look like, kind by kind: validated when the agent is written
 * (errors name the field), shown in the OpenAPI document. What each kind does is in its own file
 * (`<kind>-tool.ts`); the definitions stand apart because the agent's schema needs them and must not
 * depend on what tools call (workflows, search).
 */
export const MAX_AGENT_TOOLS = 32;
/** Operations of one OpenAPI document, and tools of one MCP server, an agent may be given. */
export const MAX_EXPOSED = 32;
/** What one agent record may spend on one OpenAPI tool (DynamoDB items hold 400 KB). */
export const MAX_STORED_BYTES = 200 * 1024;

export const TOOL_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
const toolName = z.string().regex(TOOL_NAME_PATTERN, { error: 'must start with a letter and hold only letters, digits, _ or - (≤ 64)' });
const toolDescription = z.string().trim().min(1).max(2000);
const requireApproval = z.boolean().default(false).openapi({ description: 'Pause the turn for a person to approve each call (a catch-all require_approval after the policy)' });
const toolUrl = httpUrl(4000);

/** A JSON Schema object describing a tool's arguments (what models are given). */
const argumentsSchema = z
  .looseObject({
    type: z.literal('object', { error: 'must be object: a tool takes named arguments' }),
    properties: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
    required: z.array(z.string()).optional(),
  })
  .superRefine((schema, ctx) => {
    checkable('arguments')(schema, ctx);
    for (const [i, key] of (schema.required ?? []).entries()) {
      if (!(key in (schema.properties ?? {}))) ctx.addIssue({ code: 'custom', path: ['required', i], message: `names ${quote(key)}, which is not in properties` });
    }
  });

/** The argument names a tool's JSON Schema declares; undefined where it takes any (additionalProperties). */
export const declaredArguments = (parameters: { properties?: Record<string, unknown>; additionalProperties?: unknown }): string[] | undefined =>
  parameters.additionalProperties ? undefined : Object.keys(parameters.properties ?? {});

/** A tool's policy rules read only what its calls' context holds (an agent's tool: the agent too). */
export const checkPolicy =
  (scopeOf: (tool: { policy?: PolicyRule[] }) => PolicyScope) =>
  (tool: { policy?: PolicyRule[] }, ctx: z.RefinementCtx) => {
    for (const issue of policyIssues(tool.policy, scopeOf(tool))) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  };

/** `{{name}}` placeholders of an http tool: each names one of its parameters. */
export const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

function placeholdersOf(value: unknown): string[] {
  if (typeof value === 'string') return [...value.matchAll(PLACEHOLDER)].map((m) => m[1]!);
  if (Array.isArray(value)) return value.flatMap(placeholdersOf);
  if (value && typeof value === 'object') return Object.values(value).flatMap(placeholdersOf);
  return [];
}

// ── http: one call to a URL, with templates naming the parameters ──
const httpFields = {
  type: z.literal('http'),
  name: toolName,
  description: toolDescription,
  parameters: argumentsSchema
    .default({ type: 'object', properties: {} })
    .openapi({ description: 'JSON Schema (type object) of the arguments', example: { type: 'object', properties: { orderId: { type: 'string', pattern: '^[0-9]+$' } }, required: ['orderId'] } }),
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).default('GET'),
  url: z.string().min(1).max(4000).openapi({ example: 'https://shop.example/orders/{{orderId}}', description: '{{name}} places a parameter (URL-encoded)' }),
  headers: z.record(z.string().regex(/^[A-Za-z0-9-]{1,100}$/), z.string().max(4000)).optional(),
  body: z.unknown().optional().openapi({ description: 'JSON; a string "{{name}}" is replaced by the argument, other strings interpolate. Without it, a POST/PUT/PATCH sends the arguments' }),
  requireApproval,
  policy: policyInput.optional(),
};
export const httpInput = z.strictObject({ ...httpFields, auth: authInput.optional() }).superRefine((tool, ctx) => {
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
  checkPolicy(() => ({ arguments: declaredArguments(tool.parameters), agent: true }))(tool, ctx);
});
const httpOutput = z.object({ ...httpFields, auth: authShown.optional() });

// ── openapi: the operations of an OpenAPI 3.x document ──
const openApiFields = {
  type: z.literal('openapi'),
  name: toolName.openapi({ description: 'Names the tools: each operation is the tool <name>_<operationId>' }),
  url: toolUrl.optional().openapi({ description: 'Where the document (JSON or YAML) is read from when the agent is written' }),
  document: z.record(z.string(), z.unknown()).optional().openapi({ description: 'The OpenAPI 3.0/3.1 document itself (JSON)' }),
  operations: z
    .array(z.string().min(1).max(200))
    .min(1)
    .max(MAX_EXPOSED)
    .optional()
    .openapi({ description: `operationIds the agent may call (default: all, when there are at most ${MAX_EXPOSED})` }),
  baseUrl: toolUrl.optional().openapi({ description: 'Where operations are called, instead of the document’s servers' }),
  requireApproval,
  policy: policyInput.optional(),
};
const exposes = z.array(z.object({ name: z.string(), operationId: z.string(), method: z.string(), path: z.string() }));
export const openApiInput = z
  .strictObject({
    ...openApiFields,
    auth: authInput.optional(),
    // What responses show; a client that sends back what it read may send it too (it is ignored).
    exposes: z.unknown().optional().openapi({ description: 'Read-only: ignored when sent' }),
  })
  .superRefine((tool, ctx) => {
  if ((tool.url === undefined) === (tool.document === undefined)) ctx.addIssue({ code: 'custom', path: ['document'], message: 'give the document, or its url: exactly one of them' });
  if (tool.document && Buffer.byteLength(JSON.stringify(tool.document)) > MAX_STORED_BYTES) ctx.addIssue({ code: 'custom', path: ['document'], message: `is larger than ${MAX_STORED_BYTES} bytes: give its url instead` });
  // Each operation takes its own arguments: only the roots can be checked here.
  checkPolicy(() => ({ agent: true }))(tool, ctx);
});
const openApiOutput = z.object({
  ...openApiFields,
  auth: authShown.optional(),
  exposes: exposes.openapi({ description: 'The tools the document gives the model (read-only)' }),
});

// ── mcp: the tools of a remote MCP server ──
const mcpFields = {
  type: z.literal('mcp'),
  name: toolName.openapi({ description: 'Names the tools: each of the server’s tools is <name>_<tool>' }),
  url: toolUrl.openapi({ example: 'https://mcp.example.com/mcp', description: 'The server’s Streamable HTTP endpoint' }),
  allowedTools: z
    .array(z.string().min(1).max(128))
    .min(1)
    .max(MAX_EXPOSED)
    .optional()
    .openapi({ description: `The server’s tools the agent may call (default: all, the first ${MAX_EXPOSED})` }),
  requireApproval,
  policy: policyInput.optional(),
};
// The server's tools and their arguments are known only when it is called: only the roots can be checked here.
export const mcpInput = z.strictObject({ ...mcpFields, auth: authInput.optional() }).superRefine(checkPolicy(() => ({ agent: true })));
const mcpOutput = z.object({ ...mcpFields, auth: authShown.optional() });

// ── a2a: a remote agent reached over the Agent2Agent protocol ──
const a2aFields = {
  type: z.literal('a2a'),
  name: toolName,
  description: toolDescription,
  card: toolUrl.openapi({ example: 'https://agents.example.com/a2a/billing/.well-known/agent-card.json', description: 'The remote agent’s card (read when the tool is first called, kept 5 minutes)' }),
  requireApproval,
  policy: policyInput.optional(),
};
export const a2aToolInput = z.strictObject({ ...a2aFields, auth: authInput.optional() }).superRefine(checkPolicy(() => ({ arguments: ['message'], agent: true })));
const a2aToolOutput = z.object({ ...a2aFields, auth: authShown.optional() });

// ── knowledge_search: the agent's sources, searched when the model decides ──
export const knowledgeSearchInput = z.strictObject({
  type: z.literal('knowledge_search'),
  name: toolName.default('search_knowledge'),
  description: toolDescription.default('Searches the knowledge sources of this agent; give it a query.'),
  requireApproval,
  policy: policyInput.optional(),
}).superRefine(checkPolicy(() => ({ arguments: ['query', 'topK'], agent: true })));

// ── workflow: one of the tenant's workflows ──
export const workflowInput = z.strictObject({
  type: z.literal('workflow'),
  name: toolName,
  description: toolDescription,
  workflowId: z.string().refine((id) => isId('workflow', id), { error: 'must be a workflow id (wf_…)' }),
  requireApproval,
  policy: policyInput.optional(),
}).superRefine(checkPolicy(() => ({ arguments: ['input', 'parameters'], agent: true })));

// ── code: a script the model writes, run in the sandbox ──
export const codeToolInput = z.strictObject({
  type: z.literal('code'),
  name: toolName.default('run_code'),
  description: toolDescription.default('Runs JavaScript and gives back what it returns: write a script whose top-level `return` gives the result (console.log lines come back too). Use it for arithmetic, dates and reshaping data; it has no network or files.'),
  language: z.literal('javascript').default('javascript'),
  requireApproval,
  policy: policyInput.optional(),
}).superRefine(checkPolicy(() => ({ arguments: ['source'], agent: true })));

// ── agent: another of the tenant's agents, asked in a child session ──
export const agentToolInput = z.strictObject({
  type: z.literal('agent'),
  name: toolName,
  description: toolDescription,
  agent: z
    .string()
    .max(200)
    .refine((address) => isId('agent', address.split(':')[0]!), { error: 'must name an agent: agt_…, with :<alias> or :<version> after it to run a release' })
    .openapi({ example: 'agt_01jd8x2k3m4n5p6q7r8s9t0v1w:live', description: 'The agent asked, and which release of it: `agt_…` (its draft), `agt_…:<alias>` or `agt_…:<version>`' }),
  requireApproval,
  policy: policyInput.optional(),
}).superRefine(checkPolicy(() => ({ arguments: ['message', 'context'], agent: true })));

export type HttpDefinition = z.infer<typeof httpInput>;
export type OpenApiDefinition = z.infer<typeof openApiInput>;
export type McpDefinition = z.infer<typeof mcpInput>;
export type KnowledgeSearchDefinition = z.infer<typeof knowledgeSearchInput>;
export type WorkflowDefinition = z.infer<typeof workflowInput>;
export type CodeToolDefinition = z.infer<typeof codeToolInput>;
export type AgentToolDefinition = z.infer<typeof agentToolInput>;
export type A2aToolDefinition = z.infer<typeof a2aToolInput>;

export const toolInput = z.discriminatedUnion('type', [httpInput, openApiInput, mcpInput, knowledgeSearchInput, workflowInput, codeToolInput, agentToolInput, a2aToolInput]);
export type ToolInput = z.infer<typeof toolInput>;

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
  .openapi({ description: 'Tools the agent may call (http, openapi, mcp, knowledge_search, workflow, code, agent, a2a)' });

export const toolOutput = z.union([httpOutput, openApiOutput, mcpOutput, knowledgeSearchInput, workflowInput, codeToolInput, agentToolInput, a2aToolOutput]);

/** A definition as stored: its auth's secret sealed, and what its kind keeps (an OpenAPI document's operations). */
export type Stored<T> = T extends { auth?: unknown } ? Omit<T, 'auth'> & { auth?: StoredAuth } : T;
export type StoredTool = { type: ToolInput['type']; name: string; requireApproval: boolean; policy?: PolicyRule[]; auth?: StoredAuth } & Record<string, unknown>;
