import { z } from '@hono/zod-openapi';

export const paginationQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1, { error: 'must be between 1 and 100' })
    .max(100, { error: 'must be between 1 and 100' })
    .default(20)
    .openapi({ description: 'Items per page (1–100)', example: 20 }),
  cursor: z.string().max(2048).optional().openapi({ description: 'meta.pagination.nextCursor of the previous page' }),
});
