import { z } from '@hono/zod-openapi';
import { classifyLocally } from '../../models/local-engine';
import { fallbackModels, modelName, uniqueItems } from '../../schema-helpers';
import { renderTemplate } from '../../templates';
import { resolveForTenant, tallied, type ModelTallies } from '../../usage';
import type { WorkKind } from './step-kind';

const category = z.union([
  z.string().trim().min(1).max(100),
  z.strictObject({
    name: z.string().trim().min(1).max(100),
    description: z.string().max(1000).optional(),
    examples: z.array(z.string().max(1000)).max(50).optional(),
  }),
]);

const config = z.strictObject({
  model: modelName,
  fallbackModels: fallbackModels.optional(),
  categories: z
    .array(category)
    .min(2)
    .max(50)
    .superRefine(uniqueItems((c) => (typeof c === 'string' ? c : c.name).toLowerCase(), 'category')),
  input: z.string().trim().min(1).max(10_000).optional().openapi({ description: 'Template; default {{input}}' }),
  fallbackCategory: z.string().trim().min(1).max(100).optional().openapi({ description: 'The category of an input with no evidence for any (default: a category named other, misc, general or unknown, else the first)' }),
}).superRefine((cfg, ctx) => {
  const names = cfg.categories.map((c) => (typeof c === 'string' ? c : c.name));
  if (cfg.fallbackCategory !== undefined && !names.includes(cfg.fallbackCategory)) ctx.addIssue({ code: 'custom', path: ['fallbackCategory'], message: `must be one of the categories (${names.join(', ')})` });
});

/**
 * Chooses one of the categories for the input: the built-in engine classifies lexically; a real
 * model is asked for the category's name, and an answer off the list falls back to the lexical
 * classifier rather than a guess.
 */
export const classification: WorkKind<typeof config> = {
  type: 'classification',
  config,
  categories: (cfg) => cfg.categories.map((c) => (typeof c === 'string' ? c : c.name)),
  publishes: {
    variables: ['category'],
    into(output, scope) {
      scope.vars.category = String((output as { category: unknown }).category);
    },
  },
  templateFields: ['input'],
  isOutputPath: (p) => (p.length === 1 && ['category', 'confidence', 'scores'].includes(p[0]!)) || (p.length === 2 && p[0] === 'scores'),
  async execute(cfg, { rt, scope, vars, deadline, keyId }) {
    const input = renderTemplate(cfg.input ?? '{{input}}', vars);
    const categories = cfg.categories.map((c) => (typeof c === 'string' ? { name: c } : c));
    const models: ModelTallies = {};
    const resolved = tallied(await resolveForTenant(rt, scope, cfg.model, cfg.fallbackModels, keyId), () => models);
    if (resolved.engine.provider === 'local') return { output: classifyLocally(input, categories, cfg.fallbackCategory) };
    const names = categories.map((c) => c.name);
    const result = await resolved.engine.generate(
      {
        model: resolved.model,
        messages: [{ role: 'user', content: input }],
        now: rt.clock.now(),
        instructions: `Classify the user's message into exactly one of these categories and answer with the category name only: ${categories.map((c) => `${c.name}${c.description ? ` (${c.description})` : ''}`).join('; ')}.`,
        temperature: 0,
        maxTokens: 20,
      },
      deadline,
    );
    const answer = result.text.trim().toLowerCase();
    const chosen = names.find((n) => answer === n.toLowerCase()) ?? names.find((n) => answer.includes(n.toLowerCase()));
    const output = chosen
      ? { category: chosen, confidence: 1, scores: Object.fromEntries(names.map((n) => [n, n === chosen ? 1 : 0])) }
      : classifyLocally(input, categories, cfg.fallbackCategory);
    return { output, usage: result.usage, model: result.model ?? resolved.name, models };
  },
};
