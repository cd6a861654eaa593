import type { Context } from 'hono';
import type { TokenBudget } from '../usage';
import { clockOf, type AppEnv } from './context';

/**
 * `X-Usage-Tokens-*` on a model-backed answer whose model is bound to the tenant's token budget:
 * the monthly limit, what is left of it (as of this turn), and seconds until it resets.
 */
export function setUsageHeaders(c: Context<AppEnv>, budget: TokenBudget | undefined): void {
  if (budget?.effective === undefined) return;
  c.header('X-Usage-Tokens-Limit', String(budget.effective));
  c.header('X-Usage-Tokens-Remaining', String(Math.max(0, budget.effective - budget.used)));
  c.header('X-Usage-Tokens-Reset', String(Math.max(0, Math.ceil((Date.parse(budget.resetAt) - clockOf(c).now()) / 1000))));
}
