import { z } from '@hono/zod-openapi';
import { AppError } from '../../errors';
import { log } from '../../log';
import { emitMetrics } from '../../metrics';
import { inSpan, markFailed } from '../../telemetry';
import { outboundPolicyFromConfig, type OutboundPolicy } from '../../net/outbound';
import type { Runtime } from '../../runtime';
import type { TenantScope } from '../../tenancy';
import type { Agent } from '../agent-schema';
import { httpTool } from './http-tool';
import { knowledgeSearchTool } from './knowledge-search-tool';
import { mcpTool } from './mcp-tool';
import { openApiTool } from './openapi-tool';
import { sealAuth, showAuth } from './tool-auth';
import type { StoredTool, ToolInput, toolOutput } from './definitions';
import { ToolFailure, type CallableTool, type ToolContext, type ToolKind } from './tool-kind';
import { workflowTool } from './workflow-tool';

export type { CallableTool, ToolContext } from './tool-kind';
export { toolOutput, toolsInput, type StoredTool, type ToolInput } from './definitions';

/** Every kind of agent tool, by type. */
const TOOL_KINDS = { http: httpTool, openapi: openApiTool, mcp: mcpTool, knowledge_search: knowledgeSearchTool, workflow: workflowTool } as const;
const kindOf = (type: string) => TOOL_KINDS[type as keyof typeof TOOL_KINDS] as unknown as ToolKind<ToolInput, StoredTool>;

/**
 * Makes a request's tools ready to store: each kind prepares its own (an OpenAPI document read into
 * operations), secrets are sealed (a tool whose auth comes without its secret keeps the one stored
 * for the tool of that name: a client that sends back what it read changes nothing).
 */
export async function prepareTools(rt: Runtime, scope: TenantScope, tools: ToolInput[], current: StoredTool[] = [], policy: OutboundPolicy = outboundPolicyFromConfig()): Promise<StoredTool[]> {
  return Promise.all(
    tools.map(async (tool, i): Promise<StoredTool> => {
      const kind = kindOf(tool.type);
      // The request's auth (its secret in clear) is never stored: sealed, or left out.
      const { auth: _clear, ...rest } = (kind.prepare ? await kind.prepare(rt, scope, tool, i, { policy }) : tool) as StoredTool;
      if (!('auth' in tool) || !tool.auth) return rest;
      const kept = current.find((c) => c.name === tool.name && c.type === tool.type)?.auth;
      return { ...rest, auth: await sealAuth(rt, scope, tool.name, tool.auth, kept, i) };
    }),
  );
}

/** Tools as responses show them: no sealed secret (`configured: true` in its place), what each kind shows. */
export function presentTools(tools: StoredTool[] | undefined): Array<z.infer<typeof toolOutput>> {
  return (tools ?? []).map((tool) => {
    const kind = kindOf(tool.type);
    const shown = (kind.present ? kind.present(tool) : tool) as Record<string, unknown>;
    return { ...shown, ...(tool.auth ? { auth: showAuth(tool.auth) } : {}) } as z.infer<typeof toolOutput>;
  });
}

export interface ToolCallOptions {
  /** Per call (default 10 s). */
  timeoutMs?: number;
  /** Result text kept (default 16 KiB). */
  maxResultBytes?: number;
  signal?: AbortSignal;
  /** The outbound policy (default: the deployment's). */
  policy?: OutboundPolicy;
  /** The API key of the turn. */
  keyId?: string;
}

export function toolContext(rt: Runtime, scope: TenantScope, agent: Agent, options: ToolCallOptions = {}): ToolContext {
  return { rt, scope, agent, policy: options.policy ?? outboundPolicyFromConfig(), timeoutMs: options.timeoutMs ?? 10_000, maxResultBytes: options.maxResultBytes ?? 16_384, signal: options.signal, keyId: options.keyId };
}

/**
 * The tools the model may call this turn: each definition's (one, or one per operation or MCP
 * tool). Should two share a name, the first keeps it and the other is left out, with a log line.
 */
export async function callableTools(context: ToolContext): Promise<CallableTool[]> {
  const exposed = await Promise.all((context.agent.tools ?? []).map(async (tool) => (await kindOf(tool.type).expose(tool, context)).map((t) => ({ ...t, kind: tool.type }))));
  const byName = new Map<string, CallableTool>();
  for (const tool of exposed.flat()) {
    if (byName.has(tool.name)) log.warn('tool left out: its name is taken', { tenantId: context.scope.tenantId, agentId: context.agent.id, tool: tool.name });
    else byName.set(tool.name, tool);
  }
  return [...byName.values()];
}

/** A tool's outcome: what it returned, or the error the model is told about. */
export type ToolOutcome = { ok: true; result: string } | { ok: false; error: string };

function cap(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text);
  if (bytes.length <= maxBytes) return text;
  return `${bytes.subarray(0, maxBytes).toString('utf8').replace(/\uFFFD$/, '')}\n[truncated: ${bytes.length} bytes, ${maxBytes} kept]`;
}

/** Arguments checked against the tool's JSON Schema; one the server cannot check (a remote MCP tool's) is the tool's to check. */
function checkArguments(tool: CallableTool, args: unknown): Record<string, unknown> {
  let schema: z.ZodType;
  try {
    schema = z.fromJSONSchema(tool.parameters);
  } catch {
    return (args ?? {}) as Record<string, unknown>;
  }
  const parsed = schema.safeParse(args ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ToolFailure(`invalid arguments: ${issue.path.join('.') || 'arguments'} ${issue.message}`);
  }
  return (parsed.data ?? {}) as Record<string, unknown>;
}

/**
 * Runs one call. A tool's failure (bad arguments, a refused or failing URL, a workflow that failed)
 * is an outcome the model is told about, never an exception of the turn; results are capped in
 * size, with a note when cut.
 */
export async function runTool(tool: CallableTool, args: unknown, context: ToolContext, callId?: string): Promise<ToolOutcome> {
  const started = performance.now();
  let outcome: ToolOutcome | undefined;
  try {
    outcome = await inSpan(`execute_tool ${tool.name}`, { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool.name, 'cairn.tool.kind': tool.kind, ...(callId ? { 'gen_ai.tool.call.id': callId } : {}) } }, async (span) => {
      try {
        const result = await tool.call(checkArguments(tool, args), context);
        return { ok: true, result: cap(result, context.maxResultBytes) };
      } catch (error) {
        if (!(error instanceof ToolFailure || error instanceof AppError)) throw error;
        // The model is told; the span says the tool failed.
        markFailed(span, error.message.slice(0, 200));
        return { ok: false, error: cap(error.message, 2000) };
      }
    });
    return outcome;
  } finally {
    // By kind, not name: names are the tenants' own and without bound.
    emitMetrics({ toolKind: tool.kind }, { ToolCalls: { value: 1, unit: 'count' }, ToolErrors: { value: outcome?.ok ? 0 : 1, unit: 'count' }, ToolLatency: { value: performance.now() - started, unit: 'ms' } });
  }
}
