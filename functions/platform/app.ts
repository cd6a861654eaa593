import type { MiddlewareHandler } from 'hono';
import { bodyGuard } from '../../shared/http/middleware/body-guard';
import type { AppEnv } from '../../shared/http/context';
import { DEFAULT_MAX_BODY_BYTES } from '../../shared/http/create-group-app';
import { errorHandler, notFoundResponse } from '../../shared/http/error-handler';
import { openApiApp } from '../../shared/http/openapi-app';
import { completeDocument } from '../../shared/http/openapi-contract';
import { platformAdminAuth, platformTokenAuth } from '../../shared/http/middleware/platform-auth';
import { requestContext } from '../../shared/http/middleware/request-context';
import { cors } from '../../shared/http/middleware/cors';
import { registerAgentRoutes } from './agent-routes';
import { registerDbOpsRoutes } from './db-ops-routes';
import { registerMemoryRoutes } from './memory-routes';
import { registerResourceRoutes } from './resource-routes';
import { registerUsageRoutes } from './usage-routes';
import { registerGuardrailsRoutes } from './guardrails-routes';
import { registerModelsRoutes } from './models-routes';
import { registerTenantRoutes } from './tenant-routes';
import type { RuntimeWith } from '../../shared/runtime';
import { documentStepFields } from '../../shared/workflows';

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

  registerTenantRoutes(app, rt);
  registerDbOpsRoutes(app, rt);
  registerAgentRoutes(app, rt);
  registerMemoryRoutes(app, rt);
  registerResourceRoutes(app, rt);
  registerUsageRoutes(app, rt);
  registerGuardrailsRoutes(app, rt);
  registerModelsRoutes(app, rt);

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
  let document: ReturnType<typeof platformDocument> | undefined;
  app.get('/platform/openapi.json', (c) => c.json((document ??= platformDocument(app)) as object));
  return app;
}

/** The platform API's OpenAPI document (served at /platform/openapi.json; `npm run openapi` writes it too). */
export function platformDocument(app: ReturnType<typeof openApiApp>) {
  const info = {
    title: 'Cairn platform API',
    version: '1.0.0',
    description:
      'Tenant-scoped operations. Every call but /platform/tenants needs `Authorization: Bearer <access token>`; ' +
      '`X-Tenant-Id` and `X-PG-Schema`, when sent, must match the token (else 403). Responses are `{data, meta}`; ' +
      'errors are `{error: {code, message, details}, meta}`.',
  };
  const document = app.getOpenAPI31Document({ openapi: '3.1.0', info });
  documentStepFields(document);
  return completeDocument(document, { rateLimited: false, scopeHeaders: true });
}

