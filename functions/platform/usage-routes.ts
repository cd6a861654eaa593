import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { usageBetween, usageQuery, usageReport } from '../../shared/domain/usage';
import type { AppEnv } from '../../shared/http/context';
import { ok } from '../../shared/http/envelope';
import { envelope, jsonContent } from '../../shared/http/openapi-schemas';
import type { Runtime } from '../../shared/runtime';
import { platformErrors, tokenSecurity } from './openapi';

/** `GET /platform/usage`: the token's tenant's usage, as `/v1/usage` reports it to its keys. */
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
}
