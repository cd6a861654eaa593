import { z } from '@hono/zod-openapi';
import { integerBetween } from '../../schema-helpers';
import { agent } from './agent';
import { classification } from './classification';
import { generation } from './generation';
import { http } from './http';
import { search } from './search';
import type { StepKind } from './step-kind';
import { AS_IN_CONFIG } from './step-fields-document';
import { tool } from './tool';
import { transform } from './transform';
import { code } from './code';

export const STEP_ID_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
export const stepId = z.string().regex(STEP_ID_PATTERN, { error: 'must be a step id' });

/** Every kind of step that does work; `map` runs these for each item. */
export const WORK_KINDS = { classification, search, generation, http, tool, agent, transform, code } as const;

export const DEFAULT_RETRY = { maxAttempts: 3, backoff: 'exponential', delaySeconds: 2, maxDelaySeconds: 300 } as const;

/** How a failing step is tried again: only errors that may pass next time are retried (the shared error rule). */
export const retryPolicy = z
  .strictObject({
    maxAttempts: integerBetween(1, 10).default(DEFAULT_RETRY.maxAttempts).openapi({ description: 'Attempts in all, the first included' }),
    backoff: z.enum(['exponential', 'fixed']).default(DEFAULT_RETRY.backoff),
    delaySeconds: integerBetween(0, 900).default(DEFAULT_RETRY.delaySeconds).openapi({ description: 'Before the second attempt; doubled each time when exponential' }),
    maxDelaySeconds: integerBetween(1, 900).default(DEFAULT_RETRY.maxDelaySeconds),
  })
  .openapi('RetryPolicy');
export type RetryPolicy = z.infer<typeof retryPolicy>;

/** Fields every step has, wherever it stands. */
const policyFields = {
  name: z.string().max(200).optional(),
  retry: retryPolicy.optional().openapi({ description: 'Default: 3 attempts, exponential backoff from 2 s' }),
  timeoutSeconds: integerBetween(1, 240).optional().openapi({ description: 'Limit of one attempt (default: MODEL_TIMEOUT_MS, 60 s)' }),
};

/** Fields of a step of the workflow itself (a map's steps run in sequence, without these). */
export const stepCommon = {
  id: stepId.optional().openapi({ description: 'Stable step id; `step1`, `step2`… when omitted', example: 'classify' }),
  ...policyFields,
  dependsOn: z
    .array(stepId)
    .max(50)
    .optional()
    .openapi({ description: 'Steps that must finish first (default: the previous step); several steps may depend on one (fan-out) and one on several (fan-in)' }),
  when: z
    .strictObject({ step: stepId, category: z.string().min(1).max(100) })
    .optional()
    .openapi({ description: 'Run only when that classification step chose this category (see also `condition` steps)' }),
};

/** Fields of a step inside a `map`: it runs after the one before it, for each item (retried with its item, under the map's policy). */
export const innerCommon = {
  id: stepId.openapi({ description: 'Unique in the workflow; later steps of the map read its output' }),
  name: policyFields.name,
  timeoutSeconds: policyFields.timeoutSeconds,
};

/** A field given on the step itself: checked once moved into `config`, documented as that field (documentStepFields). */
const givenOnTheStep = z.unknown().optional().openapi({ [AS_IN_CONFIG]: true } as object);

/**
 * One kind of step as a request gives it: its config's fields in `config` or on the step itself
 * (the seed's samples do that), as the documented schema says; parsed into one shape, everything
 * in `config`.
 */
export function stepOf<T extends string, C extends z.ZodObject, F extends z.ZodRawShape>(type: T, config: C, common: F) {
  const shape = config.shape as z.ZodRawShape;
  // Checked only once moved into `config`, so an error names `config.<field>` wherever the field
  // was given; documented as the config's own field (documentStepFields).
  const onTheStep = Object.fromEntries(Object.keys(shape).map((key) => [key, givenOnTheStep]));
  const given = z.strictObject({
    ...common,
    type: z.literal(type),
    config: z.strictObject(shape).partial().optional().openapi({ description: 'The step’s settings; each may instead be given on the step itself' }),
    ...onTheStep,
  });
  const stored = z.strictObject({ ...common, type: z.literal(type), config });
  const hoisted = given.transform((step, ctx) => {
    const out: Record<string, unknown> = { ...step };
    const merged: Record<string, unknown> = { ...((step as { config?: Record<string, unknown> }).config ?? {}) };
    for (const key of Object.keys(shape)) {
      if (out[key] === undefined) continue;
      if (merged[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: 'is given both on the step and in its config' });
      merged[key] = out[key];
      delete out[key];
    }
    return { ...out, config: merged };
  });
  // The transform's output is the stored shape's input (everything moved into `config`); the
  // generic types cannot show it, so the pipe is typed by what it takes and what it gives.
  return (hoisted as z.ZodType as z.ZodType<unknown, z.input<typeof stored>>).pipe(stored) as unknown as z.ZodPipe<typeof given, typeof stored>;
}

const workStepOf = <K extends StepKind, F extends z.ZodRawShape>(kind: K, common: F) => stepOf(kind.type, kind.config, common);

/** A step inside a `map`: any kind that does work. */
export const innerStep = z
  .discriminatedUnion('type', [
    workStepOf(classification, innerCommon),
    workStepOf(search, innerCommon),
    workStepOf(generation, innerCommon),
    workStepOf(http, innerCommon),
    workStepOf(tool, innerCommon),
    workStepOf(agent, innerCommon),
    workStepOf(transform, innerCommon),
    workStepOf(code, innerCommon),
  ])
  .openapi('MapStep');
export type InnerStep = z.infer<typeof innerStep>;
