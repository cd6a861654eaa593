import { z } from '@hono/zod-openapi';
import { integerBetween } from '../../schema-helpers';
import { innerStep } from './step-schema';
import { AppError } from '../../errors';
import { evaluateExpression } from '../../jsonata-expression';
import { expressionData } from '../../templates';
import type { StepKind } from './step-kind';
import { expression } from './transform';

/** Items one map may run: each is a message and a stored result. */
export const MAX_MAP_ITEMS = 1000;

const config = z.strictObject({
  items: expression.openapi({ example: 'steps.lookup.output.body.orders', description: 'JSONata giving the array to run the steps for' }),
  steps: z.array(innerStep).min(1).max(20).openapi({ description: 'Run in order for each item; they read `{{item}}`, `{{index}}`, the steps before the map and the map’s own earlier steps' }),
  concurrency: integerBetween(1, 50).default(5).openapi({ description: 'Items running at once' }),
  maxItems: integerBetween(1, MAX_MAP_ITEMS).default(MAX_MAP_ITEMS).openapi({ description: 'More items than this fail the step' }),
  failurePolicy: z.enum(['failFast', 'collect']).default('failFast').openapi({ description: 'failFast: the first failed item fails the step; collect: failed items are reported and the step succeeds' }),
}).superRefine((cfg, ctx) => {
  // An item's steps must each give a result: a background run is waited for only by an execution's own step.
  cfg.steps.forEach((step, i) => {
    if (step.type === 'agent' && (step.config as { background?: boolean }).background) ctx.addIssue({ code: 'custom', path: ['steps', i, 'config', 'background'], message: 'is not possible inside a map: its steps must each give a result (run the agent step outside the map, or without background)' });
  });
});

const toArray = (value: unknown): unknown[] => (value === null || value === undefined ? [] : Array.isArray(value) ? value : [value]);

/**
 * `map`: runs its steps for each item of an array, each item a message on the steps queue, at most
 * `concurrency` at once (the engine's fan-out: fan-out.ts). Output `{results, errors}`: each
 * item's last step's output in item order (null for a failed item), and `{index, error}` of the
 * failed ones.
 */
export const map: StepKind<typeof config> = {
  type: 'map',
  config,
  templateFields: [],
  isOutputPath: (p) => (p[0] === 'results' || p[0] === 'errors') && (p.length === 1 || /^\d+$/.test(p[1]!)),
  nested: {
    steps: (cfg) => cfg.steps,
    withSteps: (cfg, steps) => ({ ...cfg, steps }),
  },
  fansOut: {
    concurrency: (cfg) => cfg.concurrency,
    failFast: (cfg) => cfg.failurePolicy === 'failFast',
  },
  async execute(cfg, { vars }) {
    // JSONata gives a single match as itself, not an array of one: either way it is a list of items.
    const items = toArray(await evaluateExpression(cfg.items, expressionData(vars)));
    if (items.length > cfg.maxItems) throw new AppError('UNPROCESSABLE', `The items expression gave ${items.length} items; the step takes at most ${cfg.maxItems}`, { items: items.length }, { retryable: false });
    if (items.length === 0) return { output: { results: [], errors: [] } };
    return { fanOut: items };
  },
};
