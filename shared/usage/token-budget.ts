import { AppError, NotFoundError } from '../errors';
import { approximateTokens, type ChatModel, type ChatRequest, type ChatResult, type ResolvedModel } from '../models/types';
import { monthlyTokensFor } from '../plans';
import type { Runtime } from '../runtime';
import type { BudgetHolder, BudgetUnit } from '../store/token-budgets';
import type { TenantScope } from '../tenancy';
import { aroundEachCall } from '../models/around-each-call';
import { modelChain } from '../models/model-chain';
import { observedModel } from '../models/observed-model';
import { windowed } from '../models/context-window';
import { costOfTokens, hasPrice } from './usage';

/**
 * Monthly budgets, in tokens and in US dollars: a tenant's plan gives a token budget (none for
 * `unlimited`), the tenant may set a lower one and one in USD, and each API key may have its own of
 * either. Every call of a model other than the built-in engine (which costs nothing) reserves its
 * worst case first against each budget that applies — the prompt and `maxTokens`, in dollars at
 * the model's MODEL_PRICES (a model without a price is not held to a USD budget) — and gives back
 * what it did not use when it ends, so calls admitted together never pass a budget; over one is a
 * 429 `QUOTA_EXCEEDED` naming it, with the reset.
 */
const monthOf = (ms: number) => new Date(ms).toISOString().slice(0, 7);
const nextMonth = (ms: number) => {
  const d = new Date(ms);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
};
const MICRO = 1e6;
const TENANT: BudgetHolder = { tenant: true };

export interface TokenBudget {
  /** The plan's monthly tokens (undefined: none). */
  plan?: number;
  /** The tenant's own, lower limit. */
  own?: number;
  /** What applies: the lower of the two. */
  effective?: number;
  used: number;
  resetAt: string;
  /** The tenant's own monthly limit in USD, when it set one. */
  monthlyUsd?: number;
  /** USD that priced models' calls spent this month (reserved ones included). */
  usedUsd: number;
}

export interface KeyBudget {
  keyId: string;
  monthlyTokens?: number;
  monthlyUsd?: number;
  usedTokens: number;
  usedUsd: number;
  resetAt: string;
}

const dollars = (micro: number) => Math.round(micro) / MICRO;

export async function tokenBudgetOf(rt: Runtime, scope: TenantScope): Promise<TokenBudget> {
  return (await standingOf(rt, scope)).budget;
}

/** The tenant's budget and (with `keyId`) the key's limits and use this month: two reads at once. */
async function standingOf(rt: Runtime, scope: TenantScope, keyId?: string) {
  const now = rt.clock.now();
  const [tenant, standing] = await Promise.all([rt.store.apiKeys.recentTenant(scope), rt.store.tokenBudgets.standing(scope, monthOf(now), keyId)]);
  const own = standing.tenant.limits;
  const plan = tenant ? monthlyTokensFor(tenant.plan) : undefined;
  const limits = [plan, own.monthlyTokens].filter((n): n is number => n !== undefined);
  const budget: TokenBudget = {
    plan,
    own: own.monthlyTokens,
    effective: limits.length > 0 ? Math.min(...limits) : undefined,
    used: standing.tenant.used.tokens,
    resetAt: nextMonth(now).toISOString(),
    ...(own.monthlyUsd !== undefined ? { monthlyUsd: own.monthlyUsd } : {}),
    usedUsd: dollars(standing.tenant.used.microUsd),
  };
  return { budget, key: standing.key };
}

/** Sets (null: removes) the tenant's own monthly limits; the plan's token budget still applies when lower. */
export async function setTokenBudget(rt: Runtime, scope: TenantScope, change: { monthlyTokens?: number | null; monthlyUsd?: number | null }): Promise<TokenBudget> {
  await rt.store.tokenBudgets.setLimits(scope, TENANT, change);
  return tokenBudgetOf(rt, scope);
}

/** The key must be one of the tenant's (another tenant's key is a 404, as any other id). */
async function assertOwnKey(rt: Runtime, scope: TenantScope, keyId: string): Promise<void> {
  if (!(await rt.store.apiKeys.listApiKeys(scope)).some((k) => k.keyId === keyId)) throw new NotFoundError('API key', keyId);
}

export async function keyBudgetOf(rt: Runtime, scope: TenantScope, keyId: string): Promise<KeyBudget> {
  await assertOwnKey(rt, scope, keyId);
  return budgetOfKey(rt, scope, keyId);
}

async function budgetOfKey(rt: Runtime, scope: TenantScope, keyId: string): Promise<KeyBudget> {
  const now = rt.clock.now();
  const [limits, used] = await Promise.all([rt.store.tokenBudgets.limitsOf(scope, { keyId }), rt.store.tokenBudgets.used(scope, { keyId }, monthOf(now))]);
  return { keyId, ...limits, usedTokens: used.tokens, usedUsd: dollars(used.microUsd), resetAt: nextMonth(now).toISOString() };
}

export async function setKeyBudget(rt: Runtime, scope: TenantScope, keyId: string, change: { monthlyTokens?: number | null; monthlyUsd?: number | null }): Promise<KeyBudget> {
  await assertOwnKey(rt, scope, keyId);
  await rt.store.tokenBudgets.setLimits(scope, { keyId }, change);
  return budgetOfKey(rt, scope, keyId);
}

/** One budget a call is held to: whose, in what, and how much a month (tokens, or millionths of a dollar). */
interface Meter {
  holder: BudgetHolder;
  unit: BudgetUnit;
  limit: number;
}

function exceeded(meter: Meter, used: number, resetAt: string): AppError {
  const whose = 'keyId' in meter.holder ? `API key ${meter.holder.keyId}'s` : "tenant's";
  const what = meter.unit === 'tokens' ? `token budget (${meter.limit})` : `budget of ${dollars(meter.limit)} USD`;
  return new AppError('QUOTA_EXCEEDED', `The ${whose} monthly ${what} is spent or would be passed by this call; it resets at ${resetAt}`, {
    budget: meter.unit === 'tokens' ? meter.limit : dollars(meter.limit),
    used: meter.unit === 'tokens' ? used : dollars(used),
    unit: meter.unit === 'tokens' ? 'tokens' : 'usd',
    ...('keyId' in meter.holder ? { keyId: meter.holder.keyId } : {}),
    resetAt,
  });
}

/** A call's worst case: its prompt (4 characters a token) and the most it may answer. */
function worstCase(request: ChatRequest): { inputTokens: number; outputTokens: number } {
  const prompt = [request.instructions ?? '', ...request.messages.map((m) => m.content), ...(request.passages ?? []).map((p) => `${p.title} ${p.text}`), JSON.stringify(request.tools ?? []), JSON.stringify(request.toolRounds ?? [])].join(' ');
  return { inputTokens: approximateTokens(prompt), outputTokens: request.maxTokens };
}

/** What a call (its worst case, or what it used) amounts to on a meter; undefined: the meter does not hold this model (no price). */
function amountOn(meter: Meter, model: string, tokens: ChatResult['usage']): number | undefined {
  if (meter.unit === 'tokens') return tokens.inputTokens + tokens.outputTokens;
  const cost = costOfTokens(model, tokens);
  return cost === null ? undefined : Math.ceil(cost * MICRO);
}

function budgeted(rt: Runtime, scope: TenantScope, resolved: ResolvedModel, meters: Meter[]): ChatModel {
  const reserve = async (request: ChatRequest) => {
    const month = monthOf(rt.clock.now());
    const worst = worstCase(request);
    const held: Array<{ meter: Meter; amount: number }> = [];
    for (const meter of meters) {
      const amount = amountOn(meter, resolved.name, worst);
      if (amount === undefined) continue;
      const reservation = await rt.store.tokenBudgets.reserve(scope, meter.holder, month, meter.unit, amount, meter.limit);
      if (!reservation.allowed) {
        // Nothing is held for a call that does not go ahead.
        await Promise.all(held.map((h) => rt.store.tokenBudgets.adjust(scope, h.meter.holder, month, h.meter.unit, -h.amount)));
        throw exceeded(meter, reservation.used, nextMonth(rt.clock.now()).toISOString());
      }
      held.push({ meter, amount });
    }
    return { month, held };
  };
  // A settled call gives back what it did not use (all of it when it failed).
  const settle = async ({ month, held }: Awaited<ReturnType<typeof reserve>>, result?: ChatResult) => {
    await Promise.all(
      held.map(({ meter, amount }) => rt.store.tokenBudgets.adjust(scope, meter.holder, month, meter.unit, (result ? (amountOn(meter, resolved.name, result.usage) ?? 0) : 0) - amount)),
    );
  };
  return aroundEachCall(resolved.engine, { start: reserve, end: settle });
}

/** The budgets calls of the tenant (through `keyId`) are held to, with what each has used this month. */
async function metersOf(rt: Runtime, scope: TenantScope, keyId: string | undefined): Promise<{ budget: TokenBudget; meters: Array<Meter & { used: number }> }> {
  const { budget, key } = await standingOf(rt, scope, keyId);
  const meters: Array<Meter & { used: number }> = [];
  if (budget.effective !== undefined) meters.push({ holder: TENANT, unit: 'tokens', limit: budget.effective, used: budget.used });
  if (budget.monthlyUsd !== undefined) meters.push({ holder: TENANT, unit: 'microUsd', limit: Math.round(budget.monthlyUsd * MICRO), used: Math.round(budget.usedUsd * MICRO) });
  if (keyId && key?.limits.monthlyTokens !== undefined) meters.push({ holder: { keyId }, unit: 'tokens', limit: key.limits.monthlyTokens, used: key.used.tokens });
  if (keyId && key?.limits.monthlyUsd !== undefined) meters.push({ holder: { keyId }, unit: 'microUsd', limit: Math.round(key.limits.monthlyUsd * MICRO), used: key.used.microUsd });
  return { budget, meters };
}

/**
 * Resolves a model and its fallbacks for the tenant, as one model (a chain: see model-chain.ts).
 * Each model that costs tokens is bound to the budgets that apply (the tenant's, and `keyId`'s),
 * and a tenant or key whose budget is already spent is told so before anything starts (before a
 * stream opens) when its first model costs tokens.
 */
export async function resolveForTenant(rt: Runtime, scope: TenantScope, name: string, fallbacks: readonly string[] = [], keyId?: string): Promise<ResolvedModel & { budget?: TokenBudget }> {
  const resolved = await Promise.all([name, ...fallbacks].map((n) => rt.models.resolve(n)));
  // Names that resolve alike (providers without credentials all go to the built-in engine) are tried once.
  const chain = resolved.filter((r, i) => resolved.findIndex((o) => o.name === r.name) === i).map((r) => windowed(observedModel(r)));
  if (chain.every((r) => r.engine.provider === 'local')) return modelChain(chain, rt.caches.modelBreakers);
  const { budget, meters } = await metersOf(rt, scope, keyId);
  const first = chain[0]!;
  if (first.engine.provider !== 'local') {
    const spent = meters.find((m) => m.used >= m.limit && (m.unit === 'tokens' || hasPrice(first.name)));
    if (spent) throw exceeded(spent, spent.used, budget.resetAt);
  }
  const bound = chain.map((r) => (r.engine.provider === 'local' || meters.length === 0 ? r : { ...r, engine: budgeted(rt, scope, r, meters) }));
  return { ...modelChain(bound, rt.caches.modelBreakers), ...(budget.effective !== undefined ? { budget } : {}) };
}

/** The budget as a turn that used `usage` leaves it (as of that turn: others may run at once). */
export const budgetAfter = (budget: TokenBudget | undefined, usage: { inputTokens: number; outputTokens: number }): TokenBudget | undefined =>
  budget && { ...budget, used: budget.used + usage.inputTokens + usage.outputTokens };
