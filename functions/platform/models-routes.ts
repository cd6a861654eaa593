import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { config } from '../../shared/config';
import type { AppEnv } from '../../shared/http/context';
import { ok } from '../../shared/http/envelope';
import { envelope, jsonContent } from '../../shared/http/openapi-schemas';
import type { Runtime } from '../../shared/runtime';
import { adminSecurity, platformErrors } from './openapi';

const provider = z.object({
  name: z.string().openapi({ example: 'vllm' }),
  type: z.enum(['local', 'openai-compatible', 'anthropic', 'bedrock']),
  usable: z.boolean().openapi({ description: 'Whether its models can be called here; one without its credentials resolves to the built-in engine' }),
  baseUrl: z.string().optional(),
  region: z.string().optional(),
  hasApiKey: z.boolean().optional().openapi({ description: 'Whether a key is configured (never the key)' }),
  timeoutMs: z.int().optional().openapi({ description: 'How long one call may take before a chain tries the next model' }),
  promptCaching: z.boolean().optional().openapi({ description: 'Set by the provider’s settings; absent: where the provider and model support it' }),
  models: z.array(z.string()).openapi({ description: 'Models it lists (its `models` setting and those MODEL_PRICES prices); any model of the provider may be named' }),
});
const circuit = z.object({
  model: z.string(),
  state: z.enum(['closed', 'open', 'half_open']),
  recentFailures: z.int(),
  openUntil: z.string().optional(),
});
const models = z
  .object({
    defaultProvider: z.string().openapi({ description: 'Where bare model names go (DEFAULT_MODEL_PROVIDER)' }),
    providers: z.array(provider),
    prices: z.record(z.string(), z.object({ input: z.number(), output: z.number(), cachedInput: z.number().optional(), cacheWrite: z.number().optional() })).openapi({ description: 'MODEL_PRICES: USD per 1,000 tokens' }),
    circuits: z.array(circuit).openapi({ description: 'Circuit breakers of this instance with a recent failure. Each warm instance keeps its own (local mode: one for every group); in AWS the CircuitOpen metric shows every instance’s' }),
  })
  .openapi('ModelProviders');

/** `/platform/models`: the providers configured for this deployment (admin credential). */
export function registerModelsRoutes(app: OpenAPIHono<AppEnv>, rt: Runtime) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/platform/models',
      operationId: 'listModelProviders',
      tags: ['Models'],
      summary: 'The model providers configured here, their prices and circuit breakers',
      security: adminSecurity,
      responses: { 200: jsonContent(envelope(models), 'The providers'), ...platformErrors },
    }),
    async (c) =>
      ok(c, {
        defaultProvider: config.defaultModelProvider,
        providers: (await rt.models.providers?.()) ?? [],
        prices: config.modelPrices,
        circuits: rt.caches.modelBreakers.view(),
      }),
  );
}
