import { z } from '@hono/zod-openapi';

export const metaSchema = z
  .object({
    timestamp: z.string().openapi({ example: '2026-11-21T10:00:00.000Z' }),
    requestId: z.string().openapi({ example: 'req_01jd8x2k3m4n5p6q7r8s9t0v1w' }),
  })
  .openapi('Meta');

export const paginationMeta = metaSchema
  .extend({
    pagination: z.object({ limit: z.int(), nextCursor: z.string().nullable(), hasMore: z.boolean() }),
  })
  .openapi('PageMeta');

export const errorResponse = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: 'INVALID_REQUEST' }),
      message: z.string().openapi({ example: 'temperature must be between 0 and 2' }),
      details: z.record(z.string(), z.unknown()).optional().openapi({
        example: { field: 'temperature', reason: 'must be between 0 and 2' },
      }),
    }),
    meta: metaSchema,
  })
  .openapi('Error');

export const envelope = <T extends z.ZodType>(data: T) => z.object({ data, meta: metaSchema });
export const listEnvelope = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item), meta: paginationMeta });

const json = (schema: z.ZodType, description: string) => ({ content: { 'application/json': { schema } }, description });

/** The error statuses every authenticated route can answer with. */
export const commonErrors = {
  400: json(errorResponse, 'Invalid request: details.field names the field'),
  401: json(errorResponse, 'Missing, unknown or revoked API key'),
  404: json(errorResponse, 'Not found (also for ids of other tenants)'),
  413: json(errorResponse, 'Body too large'),
  415: json(errorResponse, 'Body is not application/json'),
  431: json(errorResponse, 'Request headers over 16 KB (local mode’s server; in AWS, API Gateway’s own header limit applies)'),
  429: json(errorResponse, 'Rate limit exceeded; see Retry-After'),
  500: json(errorResponse, 'Internal error'),
  503: json(errorResponse, 'The data store is briefly unavailable; retry after Retry-After seconds'),
};

export const jsonContent = json;

/** Response headers a route sets itself (the middleware's are added to every operation: http/openapi-contract.ts). */
export const locationHeader = { description: 'Where the created resource is', schema: { type: 'string' as const, example: '/v1/agents/agt_01jd8x2k3m4n5p6q7r8s9t0v1w' } };
export const replayedHeader = { description: '`true` when an Idempotency-Key retry returned the first result instead of creating again', schema: { type: 'string' as const, enum: ['true'] } };

export const deletedSchema = z.object({ id: z.string(), deleted: z.literal(true) }).openapi('Deleted');
