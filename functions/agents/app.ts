import { createGroupApp, DEFAULT_MAX_BODY_BYTES, type GroupOptions } from '../../shared/http/create-group-app';
import { OPENAI_PATHS } from '../../shared/http/error-handler';
import { lazyRoutes } from '../../shared/http/lazy-routes';
import type { RuntimeWith } from '../../shared/runtime';
import { a2aAuth } from './a2a-auth';
import { oauthCallbackAuth } from './oauth-callback-auth';

/**
 * `/v1/agents` (CRUD, versions, converse, sessions), the OpenAI-compatible `/v1/chat/completions`,
 * `/v1/models` and `/v1/responses`, the A2A protocol at `/a2a`, usage, traces and end users' data (evaluations are a group of
 * their own: functions/evals). Each section's
 * routes (and the code behind them) load when a request first reaches them (lazyRoutes).
 */
export function createAgentsApp(rt: RuntimeWith<'models' | 'secrets' | 'queues' | 'code'>, options: Partial<GroupOptions> = {}) {
  const app = createGroupApp(rt, { area: 'agents', maxBodyBytes: DEFAULT_MAX_BODY_BYTES, openAiPaths: [...OPENAI_PATHS], jsonRpcPaths: /^\/a2a\/[^/]+$/, selfAuthenticated: [{ path: '/a2a', auth: a2aAuth(rt) }, { path: '/v1/oauth/callback', auth: oauthCallbackAuth(rt) }], ...options });
  lazyRoutes(app, rt, ['/v1/agents'], async () => (await import('./agent-routes')).registerAgentRoutes);
  lazyRoutes(app, rt, ['/v1/agents/:agentId/runs'], async () => (await import('./run-routes')).registerRunRoutes);
  lazyRoutes(app, rt, ['/v1/chat/completions'], async () => (await import('./chat-completions')).registerChatCompletions);
  lazyRoutes(app, rt, ['/v1/models'], async () => (await import('./models')).registerModels);
  lazyRoutes(app, rt, ['/v1/responses'], async () => (await import('./responses')).registerResponses);
  lazyRoutes(app, rt, ['/v1/usage'], async () => (await import('./usage-routes')).registerUsage);
  lazyRoutes(app, rt, ['/v1/traces'], async () => (await import('./trace-routes')).registerTraces);
  lazyRoutes(app, rt, ['/v1/end-users'], async () => (await import('./end-user-routes')).registerEndUserRoutes);
  lazyRoutes(app, rt, ['/v1/oauth-providers', '/v1/oauth/callback'], async () => (await import('./oauth-routes')).registerOAuthRoutes);
  lazyRoutes(app, rt, ['/a2a'], async () => (await import('./a2a-routes')).registerA2aRoutes);
  return app;
}
