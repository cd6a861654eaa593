import { z } from '@hono/zod-openapi';
import { stepId } from './step-schema';
import { evaluateExpression } from '../../jsonata-expression';
import { expressionData } from '../../templates';
import type { StepKind } from './step-kind';
import { expression } from './transform';

const config = z.strictObject({
  expression: expression.openapi({ example: 'steps.lookup.output.body.amount > 500', description: 'JSONata over `input`, `parameters` and `steps.<id>.output`; its value is read as JSONata’s $boolean does' }),
  then: z.array(stepId).max(50).default([]).openapi({ description: 'Steps that run only when the expression is true (each must come after this step)' }),
  else: z.array(stepId).max(50).default([]).openapi({ description: 'Steps that run only when it is false' }),
});

/**
 * `condition`: a JSONata boolean that chooses which steps run. Output `{result}`; the steps of the
 * branch not taken are skipped (the engine asks `branches.leftOut`), and so are the steps that
 * depend only on skipped ones.
 */
export const condition: StepKind<typeof config> = {
  type: 'condition',
  config,
  templateFields: [],
  isOutputPath: (p) => p.length === 1 && p[0] === 'result',
  branches: {
    among: (cfg) => ({ then: cfg.then, else: cfg.else }),
    leftOut: (cfg, output) => ((output as { result?: unknown } | null)?.result === true ? cfg.else : cfg.then),
  },
  async execute(cfg, { vars }) {
    return { output: { result: truthy(await evaluateExpression(cfg.expression, expressionData(vars))) } };
  },
};

/** JSONata's `$boolean`: empty strings, 0, null, empty arrays and objects are false; arrays are true when any member is. */
export function truthy(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (Array.isArray(value)) return value.some(truthy);
  if (typeof value === 'object') return Object.keys(value).length > 0;
  if (typeof value === 'string') return value.length > 0;
  if (typeof value === 'number') return value !== 0;
  return value === true;
}
