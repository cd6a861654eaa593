import { z } from '@hono/zod-openapi';
import { readOnlyFields, recordFields } from '../schema-helpers';
import { webhookInput, webhookShown } from './webhook-schema';
import { MAX_SCHEDULES, scheduleInput } from './schedule-schema';
import { STEP_KINDS, STEP_TYPES } from './steps';
import { retryPolicy, stepCommon, stepOf } from './steps/step-schema';

export const workflowStep = z
  .discriminatedUnion('type', [
    stepOf('classification', STEP_KINDS.classification.config, stepCommon),
    stepOf('search', STEP_KINDS.search.config, stepCommon),
    stepOf('generation', STEP_KINDS.generation.config, stepCommon),
    stepOf('http', STEP_KINDS.http.config, stepCommon),
    stepOf('tool', STEP_KINDS.tool.config, stepCommon),
    stepOf('agent', STEP_KINDS.agent.config, stepCommon),
    stepOf('transform', STEP_KINDS.transform.config, stepCommon),
    stepOf('code', STEP_KINDS.code.config, stepCommon),
    stepOf('condition', STEP_KINDS.condition.config, stepCommon),
    stepOf('map', STEP_KINDS.map.config, stepCommon),
    stepOf('human', STEP_KINDS.human.config, stepCommon),
  ])
  .openapi('WorkflowStep');

/** What the API documents as a workflow to create (the platform definitions route shows it too). */
export const workflowInputExample = {
  name: 'Refund triage',
  description: 'Sorts a refund request and drafts the reply',
  steps: [
    { id: 'route', type: 'transform', expression: '{"priority": parameters.amount > 100 ? "high" : "normal"}' },
    { id: 'reply', type: 'generation', model: 'local/extractive', prompt: 'Draft a reply to: {{input}} (priority {{steps.route.output.priority}})' },
  ],
};

export const workflowInput = z
  .strictObject({
    name: z.string().trim().min(1).max(200).openapi({ example: 'Customer support flow' }),
    description: z.string().max(4000).default(''),
    steps: z
      .array(workflowStep)
      .min(1)
      .max(50)
      .superRefine((steps, ctx) => {
        const seen = new Map<string, number>();
        steps.forEach((step, index) => {
          if (!step.id) return;
          const first = seen.get(step.id);
          if (first !== undefined) {
            ctx.addIssue({ code: 'custom', path: [index, 'id'], message: `repeats the step id at index ${first}` });
          } else seen.set(step.id, index);
        });
      }),
    schedules: z.array(scheduleInput).max(MAX_SCHEDULES).optional().openapi({ description: 'Cron schedules that start the workflow (each with its input)' }),
    webhook: webhookInput.optional().openapi({ description: 'Where to POST each execution’s summary when it succeeds, fails, is canceled or waits (signed; see Cairn-Signature)' }),
    ...readOnlyFields,
  })
  .openapi('WorkflowInput', { example: workflowInputExample });

export type WorkflowInput = z.infer<typeof workflowInput>;
export type WorkflowStep = z.infer<typeof workflowStep> & { id: string };

export const workflow = z
  .object({
    ...recordFields,
    id: z.string().openapi({ example: 'wf_01jd8x2k3m4n5p6q7r8s9t0v1w' }),
    name: z.string(),
    description: z.string(),
    steps: z.array(
      z.object({
        id: z.string(),
        name: z.string().optional(),
        type: z.enum(STEP_TYPES),
        config: z.record(z.string(), z.unknown()),
        dependsOn: z.array(z.string()).optional(),
        when: z.object({ step: z.string(), category: z.string() }).optional(),
        retry: retryPolicy.optional(),
        timeoutSeconds: z.int().optional(),
      }),
    ),
    schedules: z.array(z.object({ cron: z.string(), timezone: z.string(), input: z.string(), parameters: z.record(z.string(), z.unknown()), enabled: z.boolean(), alias: z.string().optional() })).optional(),
    webhook: webhookShown.optional(),
  })
  .openapi('Workflow');

export type Workflow = z.infer<typeof workflow>;
