import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../shared/http/context';
import { routesDocument } from '../../shared/http/lazy-routes';
import { completeDocument } from '../../shared/http/openapi-contract';
import { documentStepFields } from '../../shared/workflows';

/** The platform API's OpenAPI document (served at /platform/openapi.json; `npm run openapi` writes it too). */
export async function platformDocument(app: OpenAPIHono<AppEnv>) {
  const info = {
    title: 'Cairn platform API',
    version: '1.0.0',
    description:
      'Tenant-scoped operations. Every call but /platform/tenants needs `Authorization: Bearer <access token>`; ' +
      '`X-Tenant-Id` and `X-PG-Schema`, when sent, must match the token (else 403). Responses are `{data, meta}`; ' +
      'errors are `{error: {code, message, details}, meta}`.',
  };
  const document = await routesDocument(app, info);
  documentStepFields(document);
  return completeDocument(document, { rateLimited: false, scopeHeaders: true });
}

