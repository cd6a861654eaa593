import { z } from '@hono/zod-openapi';
import { httpUrl } from '../schema-helpers';
import { isPlainObject } from '../json-objects';
import type { SealedSecret } from '../secrets/secret-box';

/**
 * A workflow's (or an execute request's) completion webhook as the API takes, stores and shows it;
 * its delivery is webhooks.ts's, which the webhooks worker runs without building these.
 */
export const WEBHOOK_EVENTS = ['succeeded', 'failed', 'canceled', 'waiting'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
const webhookUrl = httpUrl(2000);

export const webhookInput = z
  .strictObject({
    url: webhookUrl.openapi({ example: 'https://hooks.example.com/cairn' }),
    secret: z
      .string()
      .min(16, { error: 'must be at least 16 characters' })
      .max(256)
      .optional()
      .openapi({ description: 'Signs each delivery (HMAC-SHA256); stored sealed, never returned. Required unless one is stored (a client sending back what it read keeps it)' }),
    events: z.array(z.enum(WEBHOOK_EVENTS)).min(1).max(4).default(['succeeded', 'failed', 'canceled']),
    configured: z.boolean().optional().openapi({ description: 'Read-only: ignored when sent' }),
  })
  .openapi('WebhookInput');
export type WebhookInput = z.infer<typeof webhookInput>;

/**
 * A completion webhook as stored on a workflow or an execution: its secret sealed. (The store's
 * execution shape declares it structurally: the store knows nothing of sealing.)
 */
export const storedWebhook = z.object({ url: z.string(), events: z.array(z.enum(WEBHOOK_EVENTS)), sealed: z.custom<SealedSecret>(isPlainObject, { message: 'must be a sealed secret' }) });
export type StoredWebhook = z.infer<typeof storedWebhook>;

export const webhookShown = z.object({ url: z.string(), events: z.array(z.enum(WEBHOOK_EVENTS)), configured: z.literal(true) }).openapi('Webhook');
export type WebhookShown = z.infer<typeof webhookShown>;
