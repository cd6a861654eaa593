import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { PLANS } from '../../shared/config';
import type { AppEnv } from '../../shared/http/context';
import { ok } from '../../shared/http/envelope';
import { envelope, errorResponse, jsonContent } from '../../shared/http/openapi-schemas';
import { SCOPE_HEADERS } from '../../shared/http/middleware/platform-auth';
import { issueTenantToken, provisionTenant, revokeToken, revokeTokenById, sessionOf, tokenResponse } from '../../shared/platform/tenants';
import { TENANT_ID_PATTERN } from '../../shared/tenancy';
import { adminSecurity, platformErrors, tokenSecurity } from './openapi';
import type { Runtime } from '../../shared/runtime';

/** The platform's services, as `GET /platform/tenants` lists them. */
const SERVICES = [
  { id: 'tenants', path: '/platform/tenants', description: 'Provision tenants and issue access tokens' },
  { id: 'login', path: '/platform/login/session', description: 'Validate or revoke an access token' },
  { id: 'db', path: '/platform/db/ops', description: 'Tenant-scoped operations on logical tables' },
  { id: 'agent', path: '/platform/agent', description: 'The tenant’s agents' },
  { id: 'memory', path: '/platform/memory/query', description: 'The agent memory graph' },
  { id: 'workflow', path: '/platform/workflow/definitions', description: 'Create, compile and list workflow definitions' },
  { id: 'knowledge', path: '/platform/knowledge/collections', description: 'The tenant’s knowledge collections' },
];

const tenantId = z
  .string()
  .regex(TENANT_ID_PATTERN, { error: 'must be 2–63 lower-case letters, digits, _ or -, starting with a letter or digit' })
  .openapi({ example: 'acme', description: 'Ids starting with `cairn-` are the product’s own and use schema `public`' });

const tenantInput = z
  .strictObject({
    name: z.string().trim().min(1).max(200).openapi({ example: 'Acme Corp' }),
    tenantId: tenantId.optional(),
    plan: z.enum(PLANS).default('free'),
  })
  .openapi('TenantInput', { example: { name: 'Acme Corp', tenantId: 'acme', plan: 'pro' } });

const tenantSchema = z.object({ id: z.string(), name: z.string(), schema: z.string(), plan: z.enum(PLANS), createdAt: z.string() }).openapi('Tenant');

const provisioned = z
  .object({
    tenant: tenantSchema,
    accessToken: z.string().openapi({ example: 'cpt_v1.eyJ0IjoiYWNtZSJ9.c2lnbmF0dXJl' }),
    tokenId: z.string(),
    expiresAt: z.string().nullable(),
    apiKey: z.string().openapi({ description: 'The tenant’s public X-API-Key on its plan (shown once)' }),
  })
  .openapi('ProvisionedTenant');

const session = z
  .object({
    tenantId: z.string(),
    schema: z.string(),
    tokenId: z.string(),
    issuedAt: z.string(),
    expiresAt: z.string().optional(),
  })
  .openapi('TokenSession');


export function registerTenantRoutes(app: OpenAPIHono<AppEnv>, rt: Runtime) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/platform/tenants',
      operationId: 'listPlatformTenantsMeta',
      tags: ['Tenants'],
      summary: 'Platform services and the names of the scope headers',
      security: [],
      responses: {
        200: jsonContent(
          envelope(z.object({ services: z.array(z.object({ id: z.string(), path: z.string(), description: z.string() })), scopeHeaders: z.object({ tenant: z.string(), schema: z.string() }) })),
          'Services',
        ),
        400: jsonContent(errorResponse, 'A malformed request (such as a scope header that is not a tenant id)'),
        431: platformErrors[431],
        500: platformErrors[500],
        503: platformErrors[503],
      },
    }),
    (c) => ok(c, { services: SERVICES, scopeHeaders: SCOPE_HEADERS }),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/platform/tenants',
      operationId: 'provisionPlatformTenant',
      tags: ['Tenants'],
      summary: 'Provision a tenant: its API key and a first access token',
      security: adminSecurity,
      request: { body: { content: { 'application/json': { schema: tenantInput } }, required: true } },
      responses: {
        201: jsonContent(envelope(provisioned), 'The tenant, its access token and API key'),
        409: jsonContent(errorResponse, 'The tenant id exists'),
        502: jsonContent(errorResponse, 'API Gateway did not register the key (AWS); nothing was kept, retry'),
        ...platformErrors,
      },
    }),
    async (c) => ok(c, await provisionTenant(rt, c.req.valid('json')), 201),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/platform/tenants/{tenantId}/tokens',
      operationId: 'issuePlatformTenantToken',
      tags: ['Tenants'],
      summary: 'Issue another access token for an existing tenant',
      security: adminSecurity,
      request: {
        params: z.object({ tenantId }),
        body: {
          content: { 'application/json': { schema: z.strictObject({ ttlSeconds: z.int().min(60).max(366 * 86400).optional() }), example: { ttlSeconds: 86400 } } },
          required: false,
        },
      },
      responses: {
        201: jsonContent(envelope(z.object({ accessToken: z.string(), tokenId: z.string(), expiresAt: z.string().nullable() })), 'The token'),
        404: jsonContent(errorResponse, 'No such tenant'),
        ...platformErrors,
      },
    }),
    async (c) => {
      const body = (c.req.valid('json') ?? {});
      return ok(c, tokenResponse(await issueTenantToken(rt, c.req.valid('param').tenantId, body.ttlSeconds)), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/platform/tenants/{tenantId}/tokens/{tokenId}',
      operationId: 'revokePlatformTenantToken',
      tags: ['Tenants'],
      summary: 'Revoke one of a tenant’s tokens by id (e.g. a leaked one)',
      security: adminSecurity,
      request: { params: z.object({ tenantId, tokenId: z.string().regex(/^tok_[0-9a-z]{26}$/, { error: 'must be a token id (tok_…)' }) }) },
      responses: { 200: jsonContent(envelope(z.object({ tokenId: z.string(), revoked: z.literal(true) })), 'Revoked'), 404: jsonContent(errorResponse, 'No such tenant, or no such token of it'), ...platformErrors },
    }),
    async (c) => {
      const { tenantId: id, tokenId } = c.req.valid('param');
      await revokeTokenById(rt, id, tokenId);
      return ok(c, { tokenId, revoked: true as const });
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/platform/login/session',
      operationId: 'getPlatformLoginSession',
      tags: ['Tenants'],
      summary: 'Validate the bearer token and return its tenant scope',
      security: tokenSecurity,
      responses: { 200: jsonContent(envelope(session), 'The token’s scope'), ...platformErrors },
    }),
    (c) => {
      return ok(c, sessionOf(c.get('platformToken')));
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/platform/login/session',
      operationId: 'revokePlatformLoginSession',
      tags: ['Tenants'],
      summary: 'Revoke the presented token',
      security: tokenSecurity,
      responses: { 200: jsonContent(envelope(z.object({ tokenId: z.string(), revoked: z.literal(true) })), 'Revoked'), ...platformErrors },
    }),
    async (c) => {
      const t = c.get('platformToken');
      await revokeToken(rt, t);
      return ok(c, { tokenId: t.tokenId, revoked: true as const });
    },
  );
}
