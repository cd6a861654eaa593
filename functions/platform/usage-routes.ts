import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { keyBudgetOf, setKeyBudget, setTokenBudget, tokenBudgetOf, usageBetween, usageQuery, usageReport } from '../../shared/usage';
import type { AppEnv } from '../../shared/http/context';
import { ok } from '../../shared/http/envelope';
import { envelope, errorResponse, jsonContent } from '../../shared/http/openapi-schemas';
import type { Runtime } from '../../shared/runtime';
import { platformErrors, tokenSecurity } from './openapi';

const tokenBudget = z
  .object({
    plan: z.int().optional().openapi({ description: 'Tokens a month the plan gives (absent: unlimited)' }),
    own: z.int().optional().openapi({ description: 'The tenant’s own, lower limit' }),
    effective: z.int().optional().openapi({ description: 'The limit that applies (absent: none)' }),
    used: z.int().openapi({ description: 'Tokens of models other than the built-in engine this month, reserved ones included' }),
    resetAt: z.string().openapi({ description: 'When the month turns (UTC)' }),
    monthlyUsd: z.number().optional().openapi({ description: 'The tenant’s own monthly limit in US dollars (absent: none)' }),
    usedUsd: z.number().openapi({ description: 'US dollars priced models’ calls cost this month (MODEL_PRICES, cached input at its own price), reserved ones included' }),
  })
  .openapi('TokenBudget');

const limits = {
  monthlyTokens: z.int().min(0).max(1e12).nullable().optional().openapi({ description: 'Tokens a month; null removes the limit, absent leaves it' }),
  monthlyUsd: z.number().min(0).max(1e9).nullable().optional().openapi({ description: 'US dollars a month, at MODEL_PRICES (a model without a price is not held to it); null removes the limit, absent leaves it' }),
};
const atLeastOne = (v: { monthlyTokens?: unknown; monthlyUsd?: unknown }) => v.monthlyTokens !== undefined || v.monthlyUsd !== undefined;
const budgetInput = z
  .strictObject(limits)
  .refine(atLeastOne, { error: 'must set monthlyTokens or monthlyUsd (null removes one)' })
  .openapi('TokenBudgetInput', { example: { monthlyTokens: 5000000, monthlyUsd: 250 } });

const keyBudget = z
  .object({
    keyId: z.string(),
    monthlyTokens: z.int().optional(),
    monthlyUsd: z.number().optional(),
    usedTokens: z.int().openapi({ description: 'Tokens the key’s calls of models other than the built-in engine used this month, counted while the key has a token limit (/v1/usage?groupBy=key counts every call)' }),
    usedUsd: z.number().openapi({ description: 'US dollars the key’s calls of priced models cost this month, counted while the key has a USD limit' }),
    resetAt: z.string(),
  })
  .openapi('KeyBudget');
const keyBudgetInput = z
  .strictObject(limits)
  .refine(atLeastOne, { error: 'must set monthlyTokens or monthlyUsd (null removes one)' })
  .openapi('KeyBudgetInput', { example: { monthlyUsd: 20 } });
const keyParams = z.object({ keyId: z.string().min(1).max(100).openapi({ param: { name: 'keyId', in: 'path' }, example: 'key_01jd8x2k3m' }) });


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
      summary: 'Sets (or, with null, removes) the tenant’s own monthly budgets in tokens or US dollars; the plan’s token budget still applies when lower',
      security: tokenSecurity,
      request: { body: { content: { 'application/json': { schema: budgetInput } }, required: true } },
      responses: { 200: jsonContent(envelope(tokenBudget), 'The budget now'), ...platformErrors },
    }),
    async (c) => ok(c, await setTokenBudget(rt, c.get('platformToken').scope, c.req.valid('json'))),
  );
  app.openapi(
    createRoute({
      method: 'get',
      path: '/platform/usage/budget/keys/{keyId}',
      operationId: 'getPlatformKeyBudget',
      tags: ['Usage'],
      summary: 'An API key’s own monthly budgets and what it used this month',
      security: tokenSecurity,
      request: { params: keyParams },
      responses: { 200: jsonContent(envelope(keyBudget), 'The key’s budgets'), 404: jsonContent(errorResponse, 'No such key'), ...platformErrors },
    }),
    async (c) => {
      const { scope } = c.get('platformToken');
      return ok(c, await keyBudgetOf(rt, scope, c.req.valid('param').keyId));
    },
  );
  app.openapi(
    createRoute({
      method: 'put',
      path: '/platform/usage/budget/keys/{keyId}',
      operationId: 'setPlatformKeyBudget',
      tags: ['Usage'],
      summary: 'Sets (or, with null, removes) an API key’s own monthly budgets in tokens or US dollars; the tenant’s still apply',
      security: tokenSecurity,
      request: { params: keyParams, body: { content: { 'application/json': { schema: keyBudgetInput } }, required: true } },
      responses: { 200: jsonContent(envelope(keyBudget), 'The key’s budgets now'), 404: jsonContent(errorResponse, 'No such key'), ...platformErrors },
    }),
    async (c) => {
      const { scope } = c.get('platformToken');
      return ok(c, await setKeyBudget(rt, scope, c.req.valid('param').keyId, c.req.valid('json')));
    },
  );
}
