import { z } from '@hono/zod-openapi';
import { isPlainObject } from '../json-objects';
import { readOnlyFields, recordFields } from './schema-helpers';
import { STEP_KINDS, STEP_TYPES, stepKind } from './steps';

export const STEP_ID_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** Moves config keys given on the step into `config`, so every stored step has one shape. */
function hoistConfig(step: unknown, ctx: z.RefinementCtx): unknown {
  const kind = isPlainObject(step) && typeof step.type === 'string' ? stepKind(step.type) : undefined;
  if (!isPlainObject(step) || !kind) return step;
  if (step.config !== undefined && !isPlainObject(step.config)) return step;
  const config: Record<string, unknown> = { ...(step.config ?? {}) };
  const out: Record<string, unknown> = { ...step };
  // Keys that belong in a step's `config`; the seed's samples also put them on the step itself.
  for (const key of Object.keys(kind.config.shape)) {
    if (!(key in out)) continue;
    if (key in config) {
      ctx.addIssue({ code: 'custom', path: [key], message: 'is given both on the step and in its config' });
      continue;
    }
    config[key] = out[key];
    delete out[key];
  }
  out.config = config;
  return out;
}

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

const classificationStep = z.strictObject({ ...stepCommon, type: z.literal('classification'), config: STEP_KINDS.classification.config });
const searchStep = z.strictObject({ ...stepCommon, type: z.literal('search'), config: STEP_KINDS.search.config });
const generationStep = z.strictObject({ ...stepCommon, type: z.literal('generation'), config: STEP_KINDS.generation.config });

export const workflowStep = z
  .preprocess(hoistConfig, z.discriminatedUnion('type', [classificationStep, searchStep, generationStep]))
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
