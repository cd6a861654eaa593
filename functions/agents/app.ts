import { createGroupApp, DEFAULT_MAX_BODY_BYTES, type GroupOptions } from '../../shared/http/create-group-app';
import { OPENAI_PATHS } from '../../shared/http/error-handler';
import { lazyRoutes } from '../../shared/http/lazy-routes';
import type { RuntimeWith } from '../../shared/runtime';

/** The paths whose bodies may be JSON Lines (the group's body guard lets them through to the route: evaluation cases). */
const EVAL_JSON_LINES_PATHS = /^\/v1\/eval-datasets\/[^/]+\/cases$/;

/**
 * `/v1/agents` (CRUD, versions, converse, sessions), the OpenAI-compatible `/v1/chat/completions`,
 * `/v1/models` and `/v1/responses`, evaluations, usage, traces and end users' data. Each section's
 * routes (and the code behind them) load when a request first reaches them (lazyRoutes).
 */
export function createAgentsApp(rt: RuntimeWith<'models' | 'secrets' | 'queues'>, options: Partial<GroupOptions> = {}) {
  const app = createGroupApp(rt, { area: 'agents', maxBodyBytes: DEFAULT_MAX_BODY_BYTES, openAiPaths: [...OPENAI_PATHS], jsonLinesPaths: EVAL_JSON_LINES_PATHS, ...options });
  lazyRoutes(app, rt, ['/v1/agents'], async () => (await import('./agent-routes')).registerAgentRoutes);
  lazyRoutes(app, rt, ['/v1/chat/completions'], async () => (await import('./chat-completions')).registerChatCompletions);
  lazyRoutes(app, rt, ['/v1/models'], async () => (await import('./models')).registerModels);
  lazyRoutes(app, rt, ['/v1/responses'], async () => (await import('./responses')).registerResponses);
  lazyRoutes(app, rt, ['/v1/usage'], async () => (await import('./usage-routes')).registerUsage);
  lazyRoutes(app, rt, ['/v1/traces'], async () => (await import('./trace-routes')).registerTraces);
  lazyRoutes(app, rt, ['/v1/eval-datasets', '/v1/eval-runs'], async () => (await import('./eval-routes')).registerEvalRoutes);
  lazyRoutes(app, rt, ['/v1/end-users'], async () => (await import('./end-user-routes')).registerEndUserRoutes);
  return app;
}
