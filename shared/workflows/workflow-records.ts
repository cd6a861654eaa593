import { z } from '@hono/zod-openapi';
import { collection } from '../collection';
import { recordFields } from '../schema-helpers';
import { storedWebhook } from './webhook-schema';

/**
 * The tenant's workflow records (kept apart from workflows.ts, whose steps' code starting an
 * execution does not need): declared once and parsed when read, structurally (an older record
 * still reads). A step's config is its kind's own, read by its kind.
 */
const storedStep = z.object({
  id: z.string(),
  name: z.string().optional(),
  type: z.string(),
  config: z.record(z.string(), z.unknown()),
  dependsOn: z.array(z.string()).optional(),
  when: z.object({ step: z.string(), category: z.string() }).optional(),
  retry: z.object({ maxAttempts: z.number(), backoff: z.enum(['exponential', 'fixed']), delaySeconds: z.number(), maxDelaySeconds: z.number() }).optional(),
  timeoutSeconds: z.number().optional(),
});

export const storedWorkflow = z.object({
  ...recordFields,
  name: z.string(),
  description: z.string().default(''),
  steps: z.array(storedStep),
  schedules: z.array(z.object({ cron: z.string(), timezone: z.string(), input: z.string(), parameters: z.record(z.string(), z.unknown()), enabled: z.boolean(), alias: z.string().optional() })).optional(),
  /** Where each execution's summary is POSTed; its secret sealed. */
  webhook: storedWebhook.optional(),
});

/** A workflow as stored: its webhook's secret sealed. */
export type StoredWorkflow = z.infer<typeof storedWorkflow>;

export const workflows = collection<StoredWorkflow>('WORKFLOW', 'workflow', 'workflow', storedWorkflow);
