import { z } from '@hono/zod-openapi';
import { AppError } from '../../errors';
import { isId, SESSION_ID } from '../../ids';
import { parseAddress } from '../../releases';
import { fallbackModels } from '../../schema-helpers';
import { assertClaimAllowed, endUserOfView, namedUser, turnUser, type EndUser } from '../../identity';
import type { Runtime } from '../../runtime';
import { renderTemplate } from '../../templates';
import type { TenantScope } from '../../tenancy';
import type { StepKind } from './step-kind';


/** The agent of `agt_…`, or of a release of it: `agt_…:<alias>`, `agt_…:<version>` or `agt_…:draft`. */
const agentOf = (address: string) => parseAddress(address)?.id;

const config = z.strictObject({
  agentId: z
    .string()
    .refine((address) => isId('agent', agentOf(address) ?? ''), {
      error: 'must be an agent id (agt_…), with :<alias> or :<version> after it to run a release',
    })
    .openapi({ example: 'agt_01jd8x2k3m4n5p6q7r8s9t0v1w:live' }),
  message: z.string().trim().min(1).max(50_000).openapi({ example: 'Write a reply to the customer: {{input}}' }),
  sessionId: z.string().max(300).optional().openapi({ description: 'Template: continue this session (letters, digits, _ or -); a new session each run when absent' }),
  userId: z.string().max(300).optional().openapi({ description: 'Template: the end user the agent answers for (their memory and readable documents), in place of the execution’s. Named by the workflow, never verified: their connected accounts are not used, and a tenant that requires verified end users refuses the field' }),
  fallbackModels: fallbackModels.optional().openapi({ description: 'Models tried in order when the agent’s model fails with a 429, a 5xx, a time-out or a lost connection; in place of the agent’s own fallbackModels for this step' }),
  background: z
    .boolean()
    .optional()
    .openapi({ description: 'Run the turn as a background run (up to 20 tool rounds, 15 minutes) and wait for it without holding a worker; the output adds runId. A run that waits for a tool approval keeps the step waiting until a person decides (POST …/runs/{runId}/approvals). Not inside a map.' }),
});

/**
 * Who the turn acts for: the execution's end user, unless the step names another — who is then
 * named by data (the workflow's template and what fills it), never verified: the turn reads and
 * remembers as them but never uses their connected accounts, and where the tenant requires
 * verified users (changed since the step was written) it runs for nobody and the output says so.
 */
async function stepUser(rt: Runtime, scope: TenantScope, named: string | undefined, executionUser: EndUser | undefined): Promise<{ user?: EndUser; note?: string }> {
  if (named === undefined || named === executionUser?.id) return executionUser ? { user: executionUser } : {};
  const { user, refused } = await namedUser(rt, scope, named);
  return refused ? { note: `The step's userId was not used (${refused}): the agent answered for nobody` } : { user };
}

/** Replies longer than this are cut in the execution record (DynamoDB items hold 400 KB). */
const OUTPUT_TEXT_LIMIT = 20_000;

/**
 * `agent`: one turn with one of the tenant's agents (its model, knowledge, tools and memory), its
 * draft or a release (`agt_…:live`). Output `{reply, sessionId, sources, toolCalls, usage, model,
 * agentVersion}`. The turn is billed as the agent's, not
 * again as the step's. A turn that stops for a tool approval fails the step: a workflow cannot
 * approve for a person (use a `human` step before the call instead). With `background`, the turn
 * is a background run: the step waits for it holding no worker (the run's end settles it), its
 * step limit is a run's, and an approval it waits for is given on the run.
 */
// A map's steps may be agent steps: the map's config refuses `background` there, so an item's agent step gives a result.
export const agent: StepKind<typeof config> = {
  type: 'agent',
  config,
  templateFields: ['message', 'sessionId', 'userId'],
  references: (cfg) => [{ kind: 'AGENT', id: agentOf(cfg.agentId) ?? cfg.agentId, field: 'agentId' }],
  // A step that names its own user makes a claim: where the tenant requires verified users, it is refused when written.
  async prepare(cfg, { rt, scope, path }) {
    if (cfg.userId !== undefined) await assertClaimAllowed(rt, scope, `${path}.userId`);
    return cfg;
  },
  isOutputPath: (p) => ['reply', 'sessionId', 'sources', 'toolCalls', 'usage', 'model', 'agentVersion', 'output', 'note'].includes(p[0]!),
  async execute(cfg, { rt, scope, vars, deadline, keyId, at }) {
    if (!rt.agentTurn) throw new AppError('INTERNAL_ERROR', 'This function cannot run agent turns (no agentTurn in its runtime)');
    const sessionId = cfg.sessionId === undefined ? undefined : renderTemplate(cfg.sessionId, vars);
    if (sessionId !== undefined && !SESSION_ID.test(sessionId)) throw new AppError('UNPROCESSABLE', `sessionId rendered as "${sessionId.slice(0, 60)}", which is not 1–128 letters, digits, _ or -`, { field: 'sessionId' }, { retryable: false });
    const { user, note } = await stepUser(rt, scope, cfg.userId === undefined ? undefined : renderTemplate(cfg.userId, vars) || undefined, endUserOfView(vars.user));
    const input = { message: renderTemplate(cfg.message, vars), ...(sessionId ? { sessionId } : {}), ...turnUser(user), ...(cfg.fallbackModels ? { fallbackModels: cfg.fallbackModels } : {}), keyId };
    if (cfg.background) {
      if (!at || !rt.agentRuns) throw new AppError('INTERNAL_ERROR', 'A background agent step runs only as an execution’s own step, where runs can be started', {}, { retryable: false });
      return { awaitRun: await rt.agentRuns.start(rt, scope, cfg.agentId, { ...input, parent: at }) };
    }
    const data = await rt.agentTurn(rt, scope, cfg.agentId, input, deadline);
    if (data.status === 'requires_action') {
      throw new AppError('UNPROCESSABLE', `The agent paused for approval of ${(data.pendingToolCalls ?? []).map((c) => c.tool).join(', ')}; a workflow cannot approve tool calls`, { sessionId: data.sessionId }, { retryable: false });
    }
    const output = {
      reply: data.reply.slice(0, OUTPUT_TEXT_LIMIT),
      sessionId: data.sessionId,
      model: data.model,
      agentVersion: data.agentVersion,
      sources: data.sources,
      toolCalls: data.toolCalls ?? [],
      usage: data.usage,
      ...(data.output !== undefined ? { output: data.output } : {}),
      ...(note ? { note } : {}),
    };
    return { output };
  },
};
