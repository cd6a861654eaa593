import { z } from '@hono/zod-openapi';
import { between, fallbackModels, integerBetween, modelName } from '../../schema-helpers';
import { inFormat } from '../../models/structured-output';
import type { ChatRequest } from '../../models/types';
import { responseFormatInput } from '../../models/response-format';
import { renderTemplate } from '../../templates';
import { resolveForTenant, tallied, type ModelTallies } from '../../usage';
import type { WorkKind } from './step-kind';

const config = z.strictObject({
  model: modelName,
  fallbackModels: fallbackModels.optional(),
  prompt: z.string().trim().min(1).max(50_000).openapi({ example: 'Answer using the context: {{user_message}}' }),
  temperature: between(0, 2).optional(),
  maxTokens: integerBetween(1, 200_000).optional(),
  instructions: z.string().max(20_000).optional(),
  responseFormat: responseFormatInput.optional(),
});

/** Long generations are cut here: an execution record must stay well under DynamoDB's item limit. */
const OUTPUT_TEXT_LIMIT = 20_000;

/** Asks a model; grounded in the latest search even when the prompt does not place {{context}} itself. */
export const generation: WorkKind<typeof config> = {
  type: 'generation',
  config,
  templateFields: ['prompt', 'instructions'],
  // `json`: the parsed reply of a step with a responseFormat, at any depth.
  isOutputPath: (p) =>
    (p.length === 1 && ['text', 'usage', 'model'].includes(p[0]!)) || (p.length === 2 && p[0] === 'usage' && ['inputTokens', 'outputTokens', 'cachedInputTokens', 'cacheWriteTokens'].includes(p[1]!)) || p[0] === 'json',
  async execute(cfg, { rt, scope, vars, passages, deadline, keyId }) {
    const models: ModelTallies = {};
    const resolved = tallied(await resolveForTenant(rt, scope, cfg.model, cfg.fallbackModels, keyId), () => models);
    const request: ChatRequest = {
      model: resolved.model,
      messages: [{ role: 'user', content: renderTemplate(cfg.prompt, vars) }],
      now: rt.clock.now(),
      instructions: cfg.instructions !== undefined ? renderTemplate(cfg.instructions, vars) : undefined,
      passages,
      temperature: cfg.temperature ?? 0.7,
      maxTokens: cfg.maxTokens ?? 1024,
      ...(cfg.responseFormat ? { responseFormat: cfg.responseFormat } : {}),
    };
    const result = await inFormat(resolved, request, await resolved.engine.generate(request, deadline), deadline);
    // The model that answered: a fallback's, when the step's own model failed.
    const model = result.model ?? resolved.name;
    const output = { text: result.text.slice(0, OUTPUT_TEXT_LIMIT), usage: result.usage, model, ...(result.output !== undefined ? { json: result.output } : {}) };
    return { output, usage: result.usage, model, models };
  },
};
