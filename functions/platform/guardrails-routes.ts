import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { guardrailsInput, setTenantGuardrails, tenantGuardrails } from '../../shared/guardrails';
import type { AppEnv } from '../../shared/http/context';
import { ok } from '../../shared/http/envelope';
import { envelope, jsonContent } from '../../shared/http/openapi-schemas';
import type { Runtime } from '../../shared/runtime';
import { platformErrors, tokenSecurity } from './openapi';

const shown = z.object({ guardrails: guardrailsInput.nullable().openapi({ description: 'The defaults (null: none)' }) }).openapi('TenantGuardrails');
const tags = ['Guardrails'];

/** `/platform/guardrails`: the token's tenant's default guardrails, which every agent's own extend. */
export function registerGuardrailsRoutes(app: OpenAPIHono<AppEnv>, rt: Runtime) {
  app.openapi(
    createRoute({ method: 'get', path: '/platform/guardrails', operationId: 'getTenantGuardrails', tags, summary: 'The tenant’s default guardrails', security: tokenSecurity, responses: { 200: jsonContent(envelope(shown), 'The defaults'), ...platformErrors } }),
    async (c) => ok(c, { guardrails: (await tenantGuardrails(rt, c.get('platformToken').scope)) ?? null }),
  );
  app.openapi(
    createRoute({
      method: 'put',
      path: '/platform/guardrails',
      operationId: 'setTenantGuardrails',
      tags,
      summary: 'Sets the tenant’s default guardrails',
      description: 'Every agent of the tenant runs under them; an agent’s own guardrails extend them (lists are joined; the agent’s mode, PII action, blocked message and Bedrock guardrail win). Other instances see a change within 30 s.',
      security: tokenSecurity,
      request: { body: { content: { 'application/json': { schema: guardrailsInput } }, required: true } },
      responses: { 200: jsonContent(envelope(shown), 'The defaults now'), ...platformErrors },
    }),
    async (c) => ok(c, { guardrails: await setTenantGuardrails(rt, c.get('platformToken').scope, c.req.valid('json')) }),
  );
  app.openapi(
    createRoute({ method: 'delete', path: '/platform/guardrails', operationId: 'removeTenantGuardrails', tags, summary: 'Removes the tenant’s default guardrails', security: tokenSecurity, responses: { 200: jsonContent(envelope(shown), 'No defaults'), ...platformErrors } }),
    async (c) => ok(c, { guardrails: await setTenantGuardrails(rt, c.get('platformToken').scope, null) }),
  );
}
