import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { setTokenBudget, tokenBudgetOf, usageBetween, usageQuery, usageReport } from '../../shared/usage';
import type { AppEnv } from '../../shared/http/context';
import { ok } from '../../shared/http/envelope';
import { envelope, jsonContent } from '../../shared/http/openapi-schemas';
import type { Runtime } from '../../shared/runtime';
import { platformErrors, tokenSecurity } from './openapi';

const tokenBudget = z
  .object({
    plan: z.int().optional().openapi({ description: 'Tokens a month the plan gives (absent: unlimited)' }),
    own: z.int().optional().openapi({ description: 'The tenant’s own, lower limit' }),
    effective: z.int().optional().openapi({ description: 'The limit that applies (absent: none)' }),
    used: z.int().openapi({ description: 'Tokens of models other than the built-in engine this month, reserved ones included' }),
    resetAt: z.string().openapi({ description: 'When the month turns (UTC)' }),
  })
  .openapi('TokenBudget');

const budgetInput = z
  .strictObject({ monthlyTokens: z.int().min(0).max(1e12).nullable().openapi({ description: 'Tokens a month, below the plan’s; null removes the tenant’s own limit' }) })
  .openapi('TokenBudgetInput', { example: { monthlyTokens: 5000000 } });

/** `/platform/usage`: the token's tenant's usage, as `/v1/usage` reports it to its keys, and its token budget. */
export function registerUsageRoutes(app: OpenAPIHono<AppEnv>, rt: Runtime) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/platform/usage',
      operationId: 'getPlatformUsage',
      tags: ['Usage'],
      summary: 'The tenant’s usage between two days, grouped by day, agent, workflow, model or API key',
      security: tokenSecurity,
      request: { query: usageQuery },
      responses: { 200: jsonContent(envelope(usageReport), 'The grouped counts and their totals'), ...platformErrors },
    }),
    async (c) => ok(c, await usageBetween(rt, c.get('platformToken').scope, c.req.valid('query'))),
  );
  app.openapi(
    createRoute({
      method: 'get',
      path: '/platform/usage/budget',
      operationId: 'getPlatformTokenBudget',
      tags: ['Usage'],
      summary: 'The tenant’s monthly token budget and what this month used',
      security: tokenSecurity,
      responses: { 200: jsonContent(envelope(tokenBudget), 'The budget'), ...platformErrors },
    }),
    async (c) => ok(c, await tokenBudgetOf(rt, c.get('platformToken').scope)),
  );
  app.openapi(
    createRoute({
      method: 'put',
      path: '/platform/usage/budget',
      operationId: 'setPlatformTokenBudget',
      tags: ['Usage'],
      summary: 'Sets (or, with null, removes) the tenant’s own monthly token budget; the plan’s still applies when lower',
      security: tokenSecurity,
      request: { body: { content: { 'application/json': { schema: budgetInput } }, required: true } },
      responses: { 200: jsonContent(envelope(tokenBudget), 'The budget now'), ...platformErrors },
    }),
    async (c) => ok(c, await setTokenBudget(rt, c.get('platformToken').scope, c.req.valid('json').monthlyTokens)),
  );
}
