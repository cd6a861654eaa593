import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../shared/http/context';
import { ok } from '../../shared/http/envelope';
import { envelope, errorResponse, jsonContent } from '../../shared/http/openapi-schemas';
import { queryMemory } from '../../shared/memory/query-memory';
import { platformErrors, tokenSecurity } from './openapi';
import type { Runtime } from '../../shared/runtime';

const memoryQuery = z
  .strictObject({
    agentId: z.string().min(1).max(200),
    userId: z.string().min(1).max(200).optional().openapi({ description: 'Whose memory; the user’s facts from every session' }),
    sessionId: z.string().min(1).max(128).optional().openapi({ description: 'Without userId: the memory of that anonymous session' }),
    query: z.string().max(2000).optional(),
    entity: z.string().min(1).max(200).optional().openapi({ description: 'Start the walk at this entity' }),
    depth: z.int().min(0).max(3).default(1),
    limit: z.int().min(1).max(100).default(10),
    asOf: z.iso.datetime({ offset: true }).optional().openapi({ description: 'What held at this time, as known then' }),
    includeInvalidated: z.boolean().default(false).openapi({ description: 'Also return facts that were invalidated' }),
  })
  .openapi('MemoryQuery', { example: { agentId: 'agt_01jd8x2k3m4n5p6q7r8s9t0v1w', userId: 'u-42', query: 'delivery preferences', depth: 1 } });

const memoryResult = z
  .object({
    nodes: z.array(z.object({ id: z.string(), type: z.string(), label: z.string(), score: z.number(), mentions: z.int(), userId: z.string().nullable() })),
    edges: z.array(
      z.object({
        id: z.string(),
        from: z.string(),
        to: z.string(),
        relation: z.string(),
        fact: z.string(),
        validAt: z.string(),
        invalidAt: z.string().nullable(),
        createdAt: z.string(),
        expiredAt: z.string().nullable(),
      }),
    ),
    episodes: z.array(z.object({ id: z.string(), sessionId: z.string(), text: z.string(), at: z.string() })),
  })
  .openapi('MemoryResult');

export function registerMemoryRoutes(app: OpenAPIHono<AppEnv>, rt: Runtime) {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/platform/memory/query',
      operationId: 'queryPlatformMemory',
      tags: ['Memory'],
      summary: 'Query an agent’s memory graph',
      description:
        'Entities, facts (bi-temporal: validAt/invalidAt in the world, createdAt/expiredAt in Cairn) and episodes recorded from converse turns, ' +
        'ranked by lexical match, graph distance from the matched entities (up to depth hops) and recency.',
      security: tokenSecurity,
      request: { body: { content: { 'application/json': { schema: memoryQuery } }, required: true } },
      responses: { 200: jsonContent(envelope(memoryResult), 'The ranked subgraph'), 404: jsonContent(errorResponse, 'No such agent'), ...platformErrors },
    }),
    async (c) => {
      return ok(c, await queryMemory(rt, c.get('platformToken').scope, c.req.valid('json')));
    },
  );
}
