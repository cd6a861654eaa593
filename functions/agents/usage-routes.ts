import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { usageBetween, usageQuery, usageReport } from '../../shared/usage';
import type { AppEnv } from '../../shared/http/context';
import { ok } from '../../shared/http/envelope';
import { commonErrors, envelope, jsonContent } from '../../shared/http/openapi-schemas';
import type { Runtime } from '../../shared/runtime';

/** `GET /v1/usage`: the key's tenant's tokens, model calls and tool calls, grouped, with estimated cost. */
export function registerUsage(app: OpenAPIHono<AppEnv>, rt: Runtime) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/usage',
      operationId: 'getUsage',
      tags: ['Usage'],
      summary: 'The tenant’s usage between two days, grouped by day, agent, workflow, model or API key',
      description: 'Counts every converse, chat completions and responses turn (tokens, model calls, tool calls) and every model-backed workflow step. Costs are estimated from the deployment’s MODEL_PRICES.',
      security: [{ ApiKeyAuth: [] }],
      request: { query: usageQuery },
      responses: { 200: jsonContent(envelope(usageReport), 'The grouped counts and their totals'), ...commonErrors },
    }),
    async (c) => ok(c, await usageBetween(rt, c.get('identity').scope, c.req.valid('query'))),
  );
}
