import { z } from '@hono/zod-openapi';
import { ValidationError } from '../errors';
import type { Runtime } from '../runtime';
import { usageCounts, type UsageCounts, type UsageRow } from '../store/usage';
import type { TenantScope } from '../tenancy';
import { costOfTokens, totalCost } from './usage';

/**
 * Usage reports: a tenant's counts between two days, grouped by day, subject, model or key. Apart
 * from recording (usage.ts), which every function does and which needs none of these schemas.
 */
const GROUPS = ['day', 'agent', 'agentVersion', 'workflow', 'knowledgeSource', 'model', 'key', 'operation'] as const;
type UsageGroup = (typeof GROUPS)[number];
const MAX_DAYS = 366;

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, { error: 'must be a date (YYYY-MM-DD)' }).refine((d) => !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d), { error: 'must be a real date' });

export const usageQuery = z.object({
  from: day.optional().openapi({ description: 'First day (UTC), default: the first of this month', example: '2026-11-01' }),
  to: day.optional().openapi({ description: 'Last day (UTC), default: today', example: '2026-11-30' }),
  groupBy: z.enum(GROUPS).default('day').openapi({ description: 'day, agent, agentVersion (`<agentId>:<version|draft>`), workflow, knowledgeSource (these four: only that kind of subject’s rows), model, key, or operation (`memory`: agents’ memory extraction by a model; `request`: everything else)' }),
});

const counts = {
  inputTokens: z.int(),
  outputTokens: z.int(),
  cachedInputTokens: z.int().openapi({ description: 'Of the input tokens, those the provider read from its prompt cache (priced at MODEL_PRICES’ cachedInput)' }),
  cacheWriteTokens: z.int().openapi({ description: 'Of the input tokens, those written to the provider’s prompt cache (Anthropic, Bedrock; priced at cacheWrite)' }),
  requests: z.int().openapi({ description: 'Model calls' }),
  failedRequests: z.int().openapi({ description: 'Model calls that failed (429, 5xx, time-out, lost connection, or refused), whether or not a fallback model then answered' }),
  toolCalls: z.int(),
  searches: z.int().openapi({ description: 'Knowledge searches: through the API, by agents and by workflow steps' }),
  readUnits: z.number().openapi({ description: 'DynamoDB read capacity units the searches consumed' }),
  writeUnits: z.number().openapi({ description: 'DynamoDB write capacity units ingestion consumed' }),
  bytesIngested: z.int().openapi({ description: 'UTF-8 bytes of document text indexed' }),
  steps: z.int().openapi({ description: 'Workflow steps that succeeded' }),
  feedbackUp: z.int().openapi({ description: 'Agent replies rated up by people (POST …/messages/{messageId}/feedback); a changed rating moves between the two' }),
  feedbackDown: z.int().openapi({ description: 'Agent replies rated down' }),
  guardrailFindings: z.int().openapi({ description: 'What agents’ guardrails found in turns: personal values, denied topics, blocked words (enforced or detected)' }),
  codeMs: z.int().openapi({ description: 'Milliseconds tenants’ code ran in the sandbox (code steps, code tools)' }),
  estimatedCostUsd: z.number().nullable().openapi({ description: 'From MODEL_PRICES; null when a model in the group has no price' }),
};
export const usageReport = z
  .object({
    from: z.string(),
    to: z.string(),
    groupBy: z.enum(GROUPS),
    rows: z.array(z.object({ group: z.string().openapi({ description: 'The day, agent id, `<agentId>:<version|draft>`, workflow id, knowledge source id, model (`-`: work no model did), API key id or operation' }), ...counts })),
    totals: z.object(counts),
  })
  .openapi('UsageReport');

const costOf = (row: UsageRow) => costOfTokens(row.model, row);

function sum(rows: UsageRow[]) {
  const total = (c: keyof UsageCounts) => rows.reduce((s, r) => s + r[c], 0);
  return {
    ...usageCounts((c) => (c.endsWith('Units') ? Math.round(total(c) * 10) / 10 : total(c))),
    estimatedCostUsd: totalCost(rows.map(costOf)),
  };
}

const groupOf: Record<UsageGroup, (row: UsageRow) => string | undefined> = {
  day: (row) => row.day,
  agent: (row) => (row.subject.startsWith('agent:') ? row.subject.slice(6) : undefined),
  // Turns counted before versions existed ran the only definition there was: the draft.
  agentVersion: (row) => (row.subject.startsWith('agent:') ? `${row.subject.slice(6)}:${row.release ?? 'draft'}` : undefined),
  workflow: (row) => (row.subject.startsWith('workflow:') ? row.subject.slice(9) : undefined),
  knowledgeSource: (row) => (row.subject.startsWith('knowledge-source:') ? row.subject.slice(17) : undefined),
  model: (row) => row.model,
  key: (row) => row.keyId,
  operation: (row) => row.operation ?? 'request',
};

/** The tenant's usage between two days, grouped; totals cover every row of the period. */
export async function usageBetween(rt: Runtime, scope: TenantScope, query: z.infer<typeof usageQuery>): Promise<z.infer<typeof usageReport>> {
  const today = new Date(rt.clock.now()).toISOString().slice(0, 10);
  const from = query.from ?? `${today.slice(0, 7)}-01`;
  const to = query.to ?? today;
  if (to < from) throw new ValidationError('to', `must not be before from (${from})`);
  if ((Date.parse(to) - Date.parse(from)) / 86_400_000 >= MAX_DAYS) throw new ValidationError('to', `must be at most ${MAX_DAYS} days after from`);
  const rows = await rt.store.usage.list(scope, from, to);
  const groups = new Map<string, UsageRow[]>();
  for (const row of rows) {
    const group = groupOf[query.groupBy](row);
    if (group !== undefined) groups.set(group, [...(groups.get(group) ?? []), row]);
  }
  return {
    from,
    to,
    groupBy: query.groupBy,
    rows: [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([group, members]) => ({ group, ...sum(members) })),
    totals: sum(rows),
  };
}
