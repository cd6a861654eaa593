import type { Plan } from './config';

/** The areas of the public API that have their own budgets (one per route group). */
export type RateArea = 'agents' | 'knowledge-sources' | 'workflows';

export interface WindowLimits {
  minute: number;
  hour: number;
}

/** Plan `free` is the specification's limits; the other plans multiply them. */
const FREE: Record<RateArea, WindowLimits> = {
  agents: { minute: 100, hour: 1000 },
  'knowledge-sources': { minute: 50, hour: 500 },
  workflows: { minute: 20, hour: 200 },
};

const MULTIPLIER: Record<Exclude<Plan, 'unlimited'>, number> = { free: 1, pro: 10, enterprise: 100 };

/** The limits of a plan in an area; undefined for `unlimited`, which has none. */
export function limitsFor(plan: Plan, area: RateArea): WindowLimits | undefined {
  if (plan === 'unlimited') return undefined;
  const factor = MULTIPLIER[plan];
  return { minute: FREE[area].minute * factor, hour: FREE[area].hour * factor };
}

export const RATE_AREAS = Object.keys(FREE) as RateArea[];

/** Tokens a month of models other than the built-in engine, by plan (a tenant may set a lower budget); none for `unlimited`. */
const MONTHLY_TOKENS: Record<Exclude<Plan, 'unlimited'>, number> = { free: 1_000_000, pro: 20_000_000, enterprise: 200_000_000 };

export function monthlyTokensFor(plan: Plan): number | undefined {
  return plan === 'unlimited' ? undefined : MONTHLY_TOKENS[plan];
}
