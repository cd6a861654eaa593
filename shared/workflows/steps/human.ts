import { z } from '@hono/zod-openapi';
import { checkable, integerBetween } from '../../schema-helpers';
import { renderTemplate } from '../../templates';
import type { StepKind } from './step-kind';

/** The longest a person may be waited for: 30 days. */
export const MAX_HUMAN_WAIT_SECONDS = 30 * 86_400;

const config = z
  .strictObject({
    prompt: z.string().trim().min(1).max(20_000).openapi({ example: 'Approve a refund of {{steps.lookup.output.body.amount}} for order {{parameters.orderId}}?' }),
    schema: z
      .looseObject({ type: z.string().optional() })
      .superRefine(checkable('the input'))
      .default({ type: 'object' })
      .openapi({ description: 'JSON Schema of the input the person gives', example: { type: 'object', properties: { approved: { type: 'boolean' }, note: { type: 'string' } }, required: ['approved'] } }),
    assignee: z.string().max(300).optional().openapi({ description: 'Template: who should answer (free-form: an email, a team)' }),
    timeoutSeconds: integerBetween(1, MAX_HUMAN_WAIT_SECONDS).optional().openapi({ description: 'How long to wait (at most 30 days; no limit when absent)' }),
    onTimeout: z
      .union([z.literal('fail'), z.strictObject({ default: z.unknown() })])
      .default('fail')
      .openapi({ description: '`fail`, or `{default: <input>}` to go on as if that had been given' }),
  })
  .superRefine((cfg, ctx) => {
    if (typeof cfg.onTimeout === 'object') {
      let problem;
      try {
        problem = z.fromJSONSchema(cfg.schema as Parameters<typeof z.fromJSONSchema>[0]).safeParse(cfg.onTimeout.default);
      } catch {
        return; // the schema itself is reported
      }
      if (!problem.success) ctx.addIssue({ code: 'custom', path: ['onTimeout', 'default'], message: `does not match the schema: ${problem.error.issues[0]!.path.join('.') || 'input'} ${problem.error.issues[0]!.message}` });
    }
  });

/**
 * `human`: the execution pauses (`waiting`) with a request `{prompt, schema, assignee}` until a
 * person completes the step through the API with input matching the schema; that input is the
 * step's output (human.ts). With `timeoutSeconds`, `onTimeout` fails the step or goes on with a
 * default.
 */
export const human: StepKind<typeof config> = {
  type: 'human',
  config,
  templateFields: ['prompt', 'assignee'],
  isOutputPath: () => true,
  async execute(cfg, { rt, vars }) {
    return {
      pause: {
        prompt: renderTemplate(cfg.prompt, vars),
        schema: cfg.schema,
        ...(cfg.assignee ? { assignee: renderTemplate(cfg.assignee, vars) } : {}),
        ...(cfg.timeoutSeconds ? { expiresAt: rt.clock.now() + cfg.timeoutSeconds * 1000 } : {}),
      },
    };
  },
  pauses: {
    timedOut: (cfg) =>
      cfg.onTimeout === 'fail'
        ? { status: 'failed', error: { code: 'UNPROCESSABLE', message: `Nobody completed the step within ${cfg.timeoutSeconds} s` } }
        : { status: 'succeeded', output: cfg.onTimeout.default },
  },
};
