import { z } from '@hono/zod-openapi';
import { checkable } from '../schema-helpers';

/** A JSON Schema this server can check values against (structured replies, client tools' arguments). */
export const checkableSchema = z.record(z.string(), z.unknown()).superRefine(checkable('replies'));

/** `responseFormat` of a turn: JSON, or JSON matching a schema. */
export const responseFormatInput = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('json_object') }),
    z.strictObject({ type: z.literal('json_schema'), name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/).default('reply'), schema: checkableSchema }),
  ])
  .openapi('ResponseFormat', { description: 'The reply must be JSON (json_object) or JSON matching a JSON Schema (json_schema); it is checked, one repair is asked for, else 502' });
