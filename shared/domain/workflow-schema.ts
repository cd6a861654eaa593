import { z } from '@hono/zod-openapi';
import { readOnlyFields, recordFields } from './schema-helpers';
import { STEP_KINDS, STEP_TYPES, type StepType } from './steps';

export const STEP_ID_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

const stepCommon = {
  id: z
    .string()
    .regex(STEP_ID_PATTERN, { error: 'must start with a letter and hold only letters, digits, _ or - (≤ 64)' })
    .optional()
    .openapi({ description: 'Stable step id; `step1`, `step2`… when omitted', example: 'classify' }),
  name: z.string().max(200).optional(),
  dependsOn: z
    .array(z.string().regex(STEP_ID_PATTERN, { error: 'must be a step id' }))
    .max(50)
    .optional()
    .openapi({ description: 'Steps that must finish first (default: the previous step); several steps may depend on one (fan-out) and one on several (fan-in)' }),
  when: z
    .strictObject({ step: z.string().regex(STEP_ID_PATTERN, { error: 'must be a step id' }), category: z.string().min(1).max(100) })
    .optional()
    .openapi({ description: 'Run only when that classification step chose this category' }),
};

/**
 * One kind of step as a request gives it: its config's fields in `config` or on the step itself
 * (the seed's samples do that), as the documented schema says; parsed into one shape, everything
 * in `config`.
 */
function stepOf<T extends StepType, C extends (typeof STEP_KINDS)[StepType]['config']>(type: T, config: C) {
  // Documented as the config's own fields, checked only once moved into `config`, so an error
  // names `config.<field>` wherever the field was given.
  const onTheStep = Object.fromEntries(
    Object.entries(config.shape).map(([key, field]) => {
      const { $schema: _, ...documented } = z.toJSONSchema(field as z.ZodType, { io: 'input', unrepresentable: 'any' });
      return [key, z.unknown().optional().openapi(documented as object)];
    }),
  );
  const given = z.strictObject({
    ...stepCommon,
    type: z.literal(type),
    config: config.partial().optional().openapi({ description: 'The step’s settings; each may instead be given on the step itself' }),
    ...onTheStep,
  });
  const stored = z.strictObject({ ...stepCommon, type: z.literal(type), config });
  const hoisted = given.transform((step, ctx) => {
    const out: Record<string, unknown> = { ...step };
    const merged: Record<string, unknown> = { ...(step.config ?? {}) };
    for (const key of Object.keys(config.shape)) {
      if (out[key] === undefined) continue;
      if (merged[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: 'is given both on the step and in its config' });
      merged[key] = out[key];
      delete out[key];
    }
    return { ...out, config: merged };
  });
  // The transform's output is the stored shape's input (everything moved into `config`); the
  // generic types cannot show it, so the pipe is typed by what it takes and what it gives.
  return (hoisted as unknown as z.ZodType<unknown, z.input<typeof stored>>).pipe(stored) as unknown as z.ZodPipe<typeof given, typeof stored>;
}

export const workflowStep = z
  .discriminatedUnion('type', [
    stepOf('classification', STEP_KINDS.classification.config),
    stepOf('search', STEP_KINDS.search.config),
    stepOf('generation', STEP_KINDS.generation.config),
  ])
  .openapi('WorkflowStep');

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
    ...readOnlyFields,
  })
  .openapi('WorkflowInput');

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
      }),
    ),
  })
  .openapi('Workflow');

export type Workflow = z.infer<typeof workflow>;
