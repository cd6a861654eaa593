import { createGroupApp, DEFAULT_MAX_BODY_BYTES, type GroupOptions } from '../../shared/http/create-group-app';
import { lazyRoutes } from '../../shared/http/lazy-routes';
import type { RuntimeWith } from '../../shared/runtime';
import { hookAuth } from './hook-auth';

/**
 * `/v1/workflows`: definitions, versions and aliases, executions and their records, hooks. Each
 * section's routes (and the code behind them) load when a request first reaches them (lazyRoutes).
 */
export function createWorkflowsApp(rt: RuntimeWith<'scheduler' | 'queues' | 'secrets' | 'code'>, options: Partial<GroupOptions> = {}) {
  const app = createGroupApp(rt, { area: 'workflows', maxBodyBytes: DEFAULT_MAX_BODY_BYTES, selfAuthenticated: [{ path: '/v1/hooks', auth: hookAuth(rt) }], ...options });
  lazyRoutes(app, rt, ['/v1/workflows'], async () => (await import('./workflow-routes')).registerWorkflowRoutes);
  lazyRoutes(app, rt, ['/v1/workflows/:workflowId/execute', '/v1/workflows/:workflowId/executions', '/v1/executions'], async () => (await import('./execution-routes')).registerExecutionRoutes);
  lazyRoutes(app, rt, ['/v1/workflows/:workflowId/hooks', '/v1/hooks'], async () => (await import('./hook-routes')).registerHookRoutes);
  return app;
}
