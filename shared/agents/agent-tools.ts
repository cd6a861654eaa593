import type { z } from '@hono/zod-openapi';
import { log } from '../log';
import type { OutboundPolicy } from '../net/outbound';
import type { Runtime } from '../runtime';
import type { TenantScope } from '../tenancy';
import { knowledgeSearchTool } from './knowledge-search-tool';
import { hasSecret, REMOTE_TOOL_KINDS, type StoredTool, type ToolInput, type toolOutput, type CallableTool, type ToolContext, type ToolKind, prepareTool, presentTool, toolsOf } from '../tools';
import { workflowTool } from './workflow-tool';
import { codeTool } from './code-tool';
import { agentTool } from './agent-tool';

export type { CallableTool, ToolContext } from '../tools';
export { runTool, toolContext, type ToolCallOptions, type ToolOutcome } from '../tools';
export { toolOutput, toolsInput, type StoredTool, type ToolInput } from '../tools';

/** Every kind of agent tool, by type. */
const TOOL_KINDS = { ...REMOTE_TOOL_KINDS, knowledge_search: knowledgeSearchTool, workflow: workflowTool, code: codeTool, agent: agentTool } as const;
const kindOf = (type: string): ToolKind<ToolInput, StoredTool> => TOOL_KINDS[type as keyof typeof TOOL_KINDS];

/**
 * Makes a request's tools ready to store: each kind prepares its own (an OpenAPI document read into
 * operations), secrets are sealed (a tool whose auth comes without its secret keeps the one stored
 * for the tool of that name: a client that sends back what it read changes nothing).
 */
export async function prepareTools(rt: Runtime, scope: TenantScope, tools: ToolInput[], current: StoredTool[] = [], policy: OutboundPolicy = rt.outbound): Promise<StoredTool[]> {
  return Promise.all(tools.map((tool, i) => prepareTool(kindOf(tool.type), rt, scope, tool, current.find((c) => c.name === tool.name && c.type === tool.type), `tools[${i}]`, policy)));
}

/** Tools as responses show them. */
export function presentTools(tools: StoredTool[] | undefined): Array<z.infer<typeof toolOutput>> {
  return (tools ?? []).map((tool) => presentTool(kindOf(tool.type), tool));
}

/**
 * The tools the model may call this turn: each definition's (one, or one per operation or MCP
 * tool), but for those whose auth has no secret yet (imported without it: shown `configured:
 * false`). Should two share a name, the first keeps it and the other is left out, with a log line.
 */
export async function callableTools(context: ToolContext): Promise<CallableTool[]> {
  const usable = (context.agent?.tools ?? []).filter((tool) => hasSecret(tool.auth));
  const exposed = await Promise.all(usable.map((tool) => toolsOf(kindOf(tool.type), tool, context)));
  const byName = new Map<string, CallableTool>();
  for (const tool of exposed.flat()) {
    if (byName.has(tool.name)) log.warn('tool left out: its name is taken', { tenantId: context.scope.tenantId, agentId: context.agent?.id, tool: tool.name });
    else byName.set(tool.name, tool);
  }
  return [...byName.values()];
}

