import { z } from '@hono/zod-openapi';
import { AppError } from '../errors';
import { evaluateExpression, expressionError, rootPaths } from '../jsonata-expression';

/**
 * Rules on what a tool call may do, by what it asks: each a JSONata condition over the call (its
 * arguments, the end user, the tenant, the agent and its version), first match wins, default
 * allow. `require_approval` pauses the turn for a person as approvals do; `deny` does not make the
 * call: the model is told it was denied and why. `requireApproval: true` is a catch-all
 * `require_approval` after the rules.
 */
export const policyInput = z
  .array(
    z.strictObject({
      when: z
        .string()
        .trim()
        .min(1)
        .max(2000)
        .superRefine((text, ctx) => {
          const problem = expressionError(text);
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        })
        .openapi({ description: 'JSONata over {arguments, user: {id, groups, verified} (id null without an end user; verified: from X-End-User-Token), tenant: {id}, agent: {id, version}, tool}', example: 'arguments.amount > 1000' }),
      action: z.enum(['allow', 'require_approval', 'deny']),
      reason: z.string().trim().max(500).optional().openapi({ description: 'Told to the model (and the person approving) when the rule applies' }),
    }),
  )
  .max(20)
  .openapi({
    description: 'Rules on each call, first match wins, default allow (requireApproval: true after them)',
    example: [
      { when: 'arguments.amount > 1000', action: 'deny', reason: 'Refunds over 1,000 are refused' },
      { when: 'arguments.amount > 100', action: 'require_approval', reason: 'Refunds over 100 need a person' },
    ],
  });
export type PolicyRule = z.infer<typeof policyInput>[number];

/** The fields of a call's context below its roots (`arguments` is the tool's own). */
const CONTEXT_FIELDS: Record<string, readonly string[]> = { user: ['id', 'groups', 'verified'], tenant: ['id'], agent: ['id', 'version'] };

/** What a rule may read: the tool's argument names where it declares them (undefined: known only at call time), and whether an agent makes the call. */
export interface PolicyScope {
  arguments?: readonly string[];
  agent: boolean;
}

export interface PolicyIssue {
  path: Array<string | number>;
  /** The context root the rule reads wrongly. */
  root: string;
  message: string;
}

const shown = (name: string) => (name.length > 60 ? `${name.slice(0, 60)}…` : name);

/**
 * Each rule's paths against what a call's context holds: a rule that reads a field the call does not
 * have never matches, so a `deny` written as `amount > 1000` would let every refund through. Such a
 * rule is refused when it is written, naming the field.
 */
export function policyIssues(policy: PolicyRule[] | undefined, scope: PolicyScope): PolicyIssue[] {
  const roots = ['arguments', 'user', 'tenant', ...(scope.agent ? ['agent'] : []), 'tool'];
  const issues: PolicyIssue[] = [];
  for (const [j, rule] of (policy ?? []).entries()) {
    const problem = (root: string, message: string) => issues.push({ path: ['policy', j, 'when'], root, message });
    for (const [root, field] of rootPaths(rule.when) ?? []) {
      if (!roots.includes(root!)) {
        const argument = scope.arguments?.includes(root!) ? ` (the argument is arguments.${root})` : '';
        problem(root!, `reads ${shown(root!)}, which a call does not have${argument}: a rule reads ${roots.join(', ')}`);
      } else if (field === undefined) continue;
      else if (root === 'tool') problem(root, `reads tool.${shown(field)}: tool is the called tool's name, a string`);
      else if (root === 'arguments' && scope.arguments && !scope.arguments.includes(field)) problem(root, `reads arguments.${shown(field)}, which is not one of the tool's parameters (${scope.arguments.join(', ') || 'it has none'})`);
      else if (CONTEXT_FIELDS[root!] && !CONTEXT_FIELDS[root!]!.includes(field)) problem(root!, `reads ${root}.${shown(field)}: ${root} has ${CONTEXT_FIELDS[root!]!.join(', ')}`);
    }
  }
  return issues;
}

/** What a call is judged on. */
export interface CallContext {
  arguments: Record<string, unknown>;
  /** The end user (verified from a token, or the caller's `context.userId` and `context.groups`); id null when the turn names none. */
  user: { id: string | null; groups: string[]; verified: boolean };
  tenant: { id: string };
  agent?: { id: string; version: number | 'draft' };
  tool: string;
}

export interface CallDecision {
  action: PolicyRule['action'];
  reason?: string;
  /** The rule that decided (its index), when one did. */
  rule?: number;
}

/**
 * The first rule whose condition holds decides; none holding, `requireApproval` does. A condition
 * that fails to evaluate denies the call (a rule that cannot be read is not a rule that allows).
 */
export async function decideCall(policy: PolicyRule[] | undefined, requireApproval: boolean, context: CallContext): Promise<CallDecision> {
  for (const [i, rule] of (policy ?? []).entries()) {
    let holds: unknown;
    try {
      holds = await evaluateExpression(rule.when, context);
    } catch (error) {
      return { action: 'deny', reason: `policy rule ${i} could not be evaluated: ${(error as Error).message}`, rule: i };
    }
    if (holds === true || (holds !== null && holds !== false && holds !== undefined && holds !== 0 && holds !== '')) return { action: rule.action, ...(rule.reason ? { reason: rule.reason } : {}), rule: i };
  }
  return { action: requireApproval ? 'require_approval' : 'allow' };
}

/**
 * A workflow step's call under its policy: no person is there to approve, so a call the policy
 * denies or holds for approval fails the step, for good (retrying the same call cannot change it).
 */
export async function assertCallAllowed(policy: PolicyRule[] | undefined, requireApproval: boolean, context: CallContext): Promise<void> {
  const decision = await decideCall(policy, requireApproval, context);
  if (decision.action === 'allow') return;
  const rule = decision.rule !== undefined ? `policy rule ${decision.rule}` : 'requireApproval';
  const why = decision.action === 'deny' ? `was denied by ${rule}` : `needs a person's approval (${rule}): put a human step before it`;
  throw new AppError('UNPROCESSABLE', `The call of ${context.tool} ${why}${decision.reason ? `: ${decision.reason}` : ''}`, { tool: context.tool, ...(decision.rule !== undefined ? { rule: decision.rule } : {}) }, { retryable: false });
}
