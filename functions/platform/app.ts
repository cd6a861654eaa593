import type { MiddlewareHandler } from 'hono';
import { bodyGuard } from '../../shared/http/middleware/body-guard';
import type { AppEnv } from '../../shared/http/context';
import { DEFAULT_MAX_BODY_BYTES } from '../../shared/http/create-group-app';
import { errorHandler, notFoundResponse } from '../../shared/http/error-handler';
import { openApiApp } from '../../shared/http/openapi-app';
import { lazyRoutes } from '../../shared/http/lazy-routes';
import { loadOnce } from '../../shared/load-once';
import { platformAdminAuth, platformTokenAuth } from '../../shared/http/middleware/platform-auth';
import { requestContext } from '../../shared/http/middleware/request-context';
import { cors } from '../../shared/http/middleware/cors';
import type { RuntimeWith } from '../../shared/runtime';

const OPEN_PATHS = new Set(['/platform/openapi.json']);

/**
 * `/platform`: tenant provisioning (admin credential) and the tenant-scoped operations (access
 * token + scope headers). Same envelope and error body as the public API.
 */
export function createPlatformApp(rt: RuntimeWith<'scheduler' | 'gateway' | 'platformSecrets' | 'secrets' | 'models'>) {
  const app = openApiApp();
  app.use('*', requestContext(rt.clock));
  app.use('*', cors());
  const admin = platformAdminAuth(rt);
  const token = platformTokenAuth(rt);
  const authenticate: MiddlewareHandler<AppEnv> = async (c, next) => {
    const path = c.req.path;
    if (OPEN_PATHS.has(path) || (path === '/platform/tenants' && c.req.method === 'GET')) return next();
    if (path === '/platform/tenants' || path.startsWith('/platform/tenants/') || path === '/platform/models') return admin(c, next);
    return token(c, next);
  };
  app.use('*', authenticate);
  app.use('*', bodyGuard(DEFAULT_MAX_BODY_BYTES));
  app.onError(errorHandler);
  app.notFound(notFoundResponse);

  // Each section's routes (and the code behind them) load when a request first reaches them.
  lazyRoutes(app, rt, ['/platform/tenants', '/platform/login'], async () => (await import('./tenant-routes')).registerTenantRoutes);
  lazyRoutes(app, rt, ['/platform/db'], async () => (await import('./db-ops-routes')).registerDbOpsRoutes);
  lazyRoutes(app, rt, ['/platform/agent'], async () => (await import('./agent-routes')).registerAgentRoutes);
  lazyRoutes(app, rt, ['/platform/memory'], async () => (await import('./memory-routes')).registerMemoryRoutes);
  lazyRoutes(app, rt, ['/platform/knowledge', '/platform/workflow'], async () => (await import('./resource-routes')).registerResourceRoutes);
  lazyRoutes(app, rt, ['/platform/usage'], async () => (await import('./usage-routes')).registerUsageRoutes);
  lazyRoutes(app, rt, ['/platform/guardrails'], async () => (await import('./guardrails-routes')).registerGuardrailsRoutes);
  lazyRoutes(app, rt, ['/platform/end-user-auth'], async () => (await import('./end-user-auth-routes')).registerEndUserAuthRoutes);
  lazyRoutes(app, rt, ['/platform/models'], async () => (await import('./models-routes')).registerModelsRoutes);

  // Two bearer schemes a generated client can tell apart: a tenant's access token and the admin token.
  app.openAPIRegistry.registerComponent('securitySchemes', 'PlatformToken', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'cpt_v1 access token',
    description: 'A tenant’s access token `cpt_v1.…`, issued by POST /platform/tenants or POST /platform/tenants/{tenantId}/tokens',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'PlatformAdmin', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'platform admin token',
    description: 'The deployment’s PLATFORM_ADMIN_TOKEN (provisions tenants, issues and revokes their tokens)',
  });
  // Made when first asked for, from every section (which it builds).
  const document = loadOnce(async () => (await import('./platform-document')).platformDocument(app));
  app.get('/platform/openapi.json', async (c) => c.json((await document()) as object));
  return app;
}
