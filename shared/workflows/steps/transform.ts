import { z } from '@hono/zod-openapi';
import { evaluateExpression, expressionError } from '../../jsonata-expression';
import { expressionData } from '../../templates';
import type { WorkKind } from './step-kind';

/** A JSONata expression, checked when the workflow is written. */
export const expression = z
  .string()
  .trim()
  .min(1)
  .max(20_000)
  .superRefine((text, ctx) => {
    const problem = expressionError(text);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

const config = z.strictObject({
  expression: expression.openapi({
    example: '{ "total": $sum(steps.lookup.output.body.items.price), "customer": parameters.email }',
    description: 'JSONata over `input`, `parameters`, `steps.<id>.output` (and `item`, `index` inside a map)',
  }),
});

/** `transform`: reshapes data with JSONata (bounded in time and depth; no code runs). Output: the expression's value. */
export const transform: WorkKind<typeof config> = {
  type: 'transform',
  config,
  templateFields: [],
  isOutputPath: () => true,
  async execute(cfg, { vars }) {
    return { output: await evaluateExpression(cfg.expression, expressionData(vars)) };
  },
};
