import { AppError } from '../errors';
import { approximateTokens, type ChatModel, type ChatRequest, type ChatResult, type ResolvedModel } from '../models/types';
import { monthlyTokensFor } from '../plans';
import type { Runtime } from '../runtime';
import type { TenantScope } from '../tenancy';
import { aroundEachCall } from '../models/around-each-call';
import { observedModel } from '../models/observed-model';
import { modelChain } from '../models/model-chain';

/**
 * Monthly token budgets: a tenant's plan gives one (none for `unlimited`), and the tenant may set a
 * lower one. Every call of a model other than the built-in engine (which costs nothing) reserves its
 * worst case first — the prompt and `maxTokens` — and gives back what it did not use when it ends,
 * so calls admitted together never pass the budget; over it is a 429 `QUOTA_EXCEEDED` with the reset.
 */
const monthOf = (ms: number) => new Date(ms).toISOString().slice(0, 7);
const nextMonth = (ms: number) => {
  const d = new Date(ms);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
};

export interface TokenBudget {
  /** The plan's monthly tokens (undefined: none). */
  plan?: number;
  /** The tenant's own, lower limit. */
  own?: number;
  /** What applies: the lower of the two. */
  effective?: number;
  used: number;
  resetAt: string;
}

export async function tokenBudgetOf(rt: Runtime, scope: TenantScope): Promise<TokenBudget> {
  const now = rt.clock.now();
  const [tenant, own, used] = await Promise.all([rt.store.apiKeys.getTenant(scope), rt.store.tokenBudgets.limitOf(scope), rt.store.tokenBudgets.used(scope, monthOf(now))]);
  const plan = tenant ? monthlyTokensFor(tenant.plan) : undefined;
  const limits = [plan, own].filter((n): n is number => n !== undefined);
  return { plan, own, effective: limits.length > 0 ? Math.min(...limits) : undefined, used, resetAt: nextMonth(now).toISOString() };
}

/** Sets (null: removes) the tenant's own monthly limit; the plan's still applies when lower. */
export async function setTokenBudget(rt: Runtime, scope: TenantScope, monthlyTokens: number | null): Promise<TokenBudget> {
  await rt.store.tokenBudgets.setLimit(scope, monthlyTokens);
  return tokenBudgetOf(rt, scope);
}

function exceeded(budget: number, used: number, resetAt: string): AppError {
  return new AppError('QUOTA_EXCEEDED', `The tenant's monthly token budget (${budget}) is spent or would be passed by this call; it resets at ${resetAt}`, { budget, used, resetAt });
}

/** A call's worst case: its prompt (4 characters a token) and the most it may answer. */
function worstCase(request: ChatRequest): number {
  const prompt = [request.instructions ?? '', ...request.messages.map((m) => m.content), ...(request.passages ?? []).map((p) => `${p.title} ${p.text}`), JSON.stringify(request.tools ?? []), JSON.stringify(request.toolRounds ?? [])].join(' ');
  return approximateTokens(prompt) + request.maxTokens;
}

function budgeted(rt: Runtime, scope: TenantScope, engine: ChatModel, budget: number): ChatModel {
  const reserve = async (request: ChatRequest) => {
    const month = monthOf(rt.clock.now());
    const tokens = worstCase(request);
    const reservation = await rt.store.tokenBudgets.reserve(scope, month, tokens, budget);
    if (!reservation.allowed) throw exceeded(budget, reservation.used, nextMonth(rt.clock.now()).toISOString());
    return { month, tokens };
  };
  // A settled call gives back what it did not use (all of it when it failed).
  const settle = (held: { month: string; tokens: number }, result?: ChatResult) =>
    rt.store.tokenBudgets.adjust(scope, held.month, (result ? result.usage.inputTokens + result.usage.outputTokens : 0) - held.tokens);
  return aroundEachCall(engine, { start: reserve, end: settle });
}

/**
 * Resolves a model and its fallbacks for the tenant, as one model (a chain: see model-chain.ts).
 * Each model that costs tokens is bound to the tenant's budget, and a tenant whose budget is already
 * spent is told so before anything starts (before a stream opens) when its first model costs tokens.
 */
export async function resolveForTenant(rt: Runtime, scope: TenantScope, name: string, fallbacks: readonly string[] = []): Promise<ResolvedModel & { budget?: TokenBudget }> {
  const resolved = await Promise.all([name, ...fallbacks].map((n) => rt.models.resolve(n)));
  // Names that resolve alike (providers without credentials all go to the built-in engine) are tried once.
  const chain = resolved.filter((r, i) => resolved.findIndex((o) => o.name === r.name) === i).map(observedModel);
  const paid = chain.some((r) => r.engine.provider !== 'local');
  const budget = paid ? await tokenBudgetOf(rt, scope) : undefined;
  if (budget?.effective !== undefined && chain[0]!.engine.provider !== 'local' && budget.used >= budget.effective) throw exceeded(budget.effective, budget.used, budget.resetAt);
  const bound = chain.map((r) => (r.engine.provider === 'local' || budget?.effective === undefined ? r : { ...r, engine: budgeted(rt, scope, r.engine, budget.effective) }));
  return { ...modelChain(bound, rt.caches.modelBreakers), ...(budget?.effective !== undefined ? { budget } : {}) };
}

/** The budget as a turn that used `usage` leaves it (as of that turn: others may run at once). */
export const budgetAfter = (budget: TokenBudget | undefined, usage: { inputTokens: number; outputTokens: number }): TokenBudget | undefined =>
  budget && { ...budget, used: budget.used + usage.inputTokens + usage.outputTokens };
