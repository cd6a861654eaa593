import { z } from '@hono/zod-openapi';
import { AppError, UpstreamError, ValidationError } from '../../errors';
import { a2aToolInput, assertCallAllowed, httpInput, policyIssues, mcpInput, openApiInput, type StoredTool, remoteKindOf, prepareTool, presentTool, runTool, toolContext, toolsOf } from '../../tools';
import { renderDeep } from '../../templates';
import type { WorkKind } from './step-kind';
import { endUserOfView, userView } from '../../identity';

const config = z.strictObject({
  tool: z.discriminatedUnion('type', [httpInput, openApiInput, mcpInput, a2aToolInput]).openapi({ description: 'A tool definition as on agents (http, openapi, mcp or a2a); its auth is sealed when stored' }),
  name: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .openapi({ description: 'Which of the definition’s tools to call: `<tool name>_<operationId>` (openapi) or `<tool name>_<server tool>` (mcp); default: its only one' }),
  arguments: z.record(z.string(), z.unknown()).default({}).openapi({ description: 'JSON whose strings are templates (a string that is exactly one template becomes its value)' }),
}).superRefine((cfg, ctx) => {
  // The definition checked its rules as an agent's tool; a step's call has no agent to read.
  for (const issue of policyIssues(cfg.tool.policy, { agent: false })) if (issue.root === 'agent') ctx.addIssue({ code: 'custom', path: ['tool', ...issue.path], message: issue.message });
});

type Config = z.infer<typeof config>;

/**
 * `tool`: calls one tool definition (http, openapi or mcp, as agents have them) with templated
 * arguments, checked against the tool's parameters. Output `{result}`: the tool's answer, parsed when
 * it is JSON. A refused or failing call fails the step (retryably when the tool may answer next time).
 */
export const tool: WorkKind<typeof config> = {
  type: 'tool',
  config,
  templateFields: ['arguments'],
  isOutputPath: (p) => p[0] === 'result',
  async prepare(cfg, { rt, scope, path, current }) {
    const kept = (current as Config | undefined)?.tool as StoredTool | undefined;
    const stored = await prepareTool(remoteKindOf(cfg.tool.type), rt, scope, cfg.tool, kept?.type === cfg.tool.type ? kept : undefined, `${path}.tool`);
    return { ...cfg, tool: stored as never };
  },
  present: (cfg) => ({ ...cfg, tool: presentTool(remoteKindOf(cfg.tool.type), cfg.tool) }),
  async execute(cfg, { rt, scope, vars, deadline, timeoutMs, keyId }) {
    const user = endUserOfView(vars.user);
    const context = toolContext(rt, scope, undefined, { timeoutMs: timeoutMs ?? 30_000, maxResultBytes: 64 * 1024, signal: deadline, keyId, policy: rt.outbound, ...(user ? { user } : {}) });
    const tools = await toolsOf(remoteKindOf(cfg.tool.type), cfg.tool, context);
    const chosen = cfg.name ? tools.find((t) => t.name === cfg.name) : tools.length === 1 ? tools[0] : undefined;
    if (!chosen) {
      const names = tools.map((t) => t.name).join(', ') || 'none';
      throw new AppError('UNPROCESSABLE', cfg.name ? `The tool has no ${cfg.name} (it has: ${names})` : `The tool gives several tools: name one of ${names}`, { field: 'name' }, { retryable: tools.length === 0 });
    }
    const args = renderDeep(cfg.arguments, vars) as Record<string, unknown>;
    // The definition's policy holds for steps too: a call it denies (or would hold for a person) fails the step.
    await assertCallAllowed(chosen.policy, chosen.requireApproval, { arguments: args, user: vars.user ?? userView(undefined), tenant: { id: scope.tenantId }, tool: chosen.name });
    const outcome = await runTool(chosen, args, context);
    if (!outcome.ok) {
      if (outcome.invalidArguments) throw new ValidationError('arguments', outcome.error.replace(/^invalid arguments: /, ''));
      throw new UpstreamError(`The tool ${chosen.name} failed: ${outcome.error}`, { tool: chosen.name }, { retryable: outcome.retryable });
    }
    let result: unknown = outcome.result;
    try {
      result = JSON.parse(outcome.result);
    } catch {
      /* text */
    }
    return { output: { result } };
  },
};
