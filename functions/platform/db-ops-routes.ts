import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../shared/http/context';
import { ok } from '../../shared/http/envelope';
import { envelope, jsonContent } from '../../shared/http/openapi-schemas';
import { dbOpRequest, describeTables, runDbOperation } from '../../shared/platform/db-ops';
import { platformErrors, tokenSecurity } from './openapi';
import type { Runtime } from '../../shared/runtime';

const request = dbOpRequest.openapi('DbOperation', {
  example: { operation: 'query', table: 'memory_edges', where: { userId: 'u-42', relation: { in: ['prefers', 'likes'] } }, limit: 20 },
});

/** What `describeTables` answers: the allowed logical tables and how requests may name them. */
const catalogue = z
  .object({
    operators: z.array(z.string()),
    limits: z.object({ conditions: z.int(), inValues: z.int(), pageSize: z.int(), rowsExaminedPerQuery: z.int(), rowsExaminedPerCount: z.int() }),
    tables: z.array(
      z.object({
        name: z.string(),
        description: z.string(),
        key: z.array(z.string()).openapi({ description: 'The fields that together name one row' }),
        partition: z.string().openapi({ description: 'Which equalities a query or count needs, in words' }),
        operations: z.array(z.string()),
        writable: z.array(z.string()),
        fields: z.array(z.object({ name: z.string(), type: z.string(), nullable: z.boolean(), writable: z.boolean(), description: z.string() })),
        dynamicFields: z.string().optional(),
      }),
    ),
  })
  .openapi('TableCatalogue');

export function registerDbOpsRoutes(app: OpenAPIHono<AppEnv>, rt: Runtime) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/platform/db/ops',
      operationId: 'describePlatformDbOps',
      tags: ['Data'],
      summary: 'The allowed logical tables: fields, types, key, operations, writable fields',
      security: tokenSecurity,
      responses: { 200: jsonContent(envelope(catalogue), 'Tables and operators'), ...platformErrors },
    }),
    (c) => ok(c, describeTables()),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/platform/db/ops',
      operationId: 'runPlatformDbOps',
      tags: ['Data'],
      summary: 'Run one tenant-scoped operation (get, query, put, update, delete, count)',
      description:
        '`where`: `{field: value}` or `{field: {eq|ne|lt|lte|gt|gte|between|begins_with|in|exists: value}}`, all conditions must hold. ' +
        'Queries read one partition in key order and return `nextCursor` while more remains. Table and field names come from the ' +
        'allow-list of GET /platform/db/ops only; anything else, and any value outside the token’s tenant or schema, is a 400.',
      security: tokenSecurity,
      request: { body: { content: { 'application/json': { schema: request } }, required: true } },
      responses: { 200: jsonContent(envelope(z.record(z.string(), z.unknown())), 'The result'), ...platformErrors },
    }),
    async (c) => ok(c, await runDbOperation(rt, c.get('platformToken').scope, c.req.valid('json'))),
  );
}
