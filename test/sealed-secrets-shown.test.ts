import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { pcall, platformTestSecrets, provision, type ProvisionedTenant } from './helpers/platform';
import { testRt } from './helpers/runtime';

/**
 * Sealed secrets are stored, never shown: every answer that carries a record with one (an
 * execution's webhook, an agent's tool auth, a workflow's step auth and webhook, through the API
 * and through the platform's db/ops) says the secret is set, not what sealed it.
 */
const app = createLocalApp(testRt);
const SEALED_PARTS = /"(sealed|wrap|iv|tag)"\s*:/;

describe('sealed secrets in answers', () => {
  let tenant: ProvisionedTenant;
  const key = () => tenant.apiKey;
  beforeAll(async () => {
    tenant = await provision(app, platformTestSecrets().adminToken, { plan: 'unlimited' });
  });

  it('shows an execution’s webhook as configured, in the execution, its list and db/ops', async () => {
    const created = await call(app, 'POST', '/v1/workflows', {
      key: key(),
      body: { name: 'hooked', steps: [{ id: 'wait', type: 'human', prompt: 'ok?' }], webhook: { url: 'https://hooks.example/done', secret: 'webhook-secret-123', events: ['succeeded'] } },
    });
    expect(created.status).toBe(201);
    const started = await call(app, 'POST', `/v1/workflows/${created.body.data.id}/execute`, { key: key(), body: { input: 'x', mode: 'async' } });
    expect(started.status).toBeLessThan(300);
    const id = started.body.data.id as string;
    const one = await call(app, 'GET', `/v1/workflows/${created.body.data.id}/executions/${id}`, { key: key() });
    expect(one.body.data.webhook).toEqual({ url: 'https://hooks.example/done', events: ['succeeded'], configured: true });
    const list = await call(app, 'GET', `/v1/workflows/${created.body.data.id}/executions`, { key: key() });
    const rows = await pcall(app, 'POST', '/platform/db/ops', tenant.accessToken, { body: { operation: 'query', table: 'workflow_executions', where: { workflowId: created.body.data.id } } });
    expect(rows.status).toBe(200);
    for (const answer of [one.body, list.body, rows.body]) expect(JSON.stringify(answer)).not.toMatch(SEALED_PARTS);
    expect(JSON.stringify(rows.body)).toContain('"configured":true');
  });

  it('shows agents’ tool auth and workflows’ step auth as configured through db/ops', async () => {
    const tool = { type: 'http', name: 'lookup', description: 'Looks an order up', url: 'https://shop.example/orders/{{id}}', parameters: { type: 'object', properties: { id: { type: 'string' } } }, auth: { type: 'bearer', token: 'tool-secret-456' } };
    expect((await call(app, 'POST', '/v1/agents', { key: key(), body: { name: 'a', model: 'gpt-4', tools: [tool] } })).status).toBe(201);
    const step = { id: 'fetch', type: 'http', url: 'https://shop.example/orders', auth: { type: 'bearer', token: 'step-secret-789' } };
    expect((await call(app, 'POST', '/v1/workflows', { key: key(), body: { name: 'w', steps: [step] } })).status).toBe(201);
    for (const table of ['agents', 'workflow_definitions']) {
      const rows = await pcall(app, 'POST', '/platform/db/ops', tenant.accessToken, { body: { operation: 'query', table } });
      expect(rows.status, table).toBe(200);
      expect(JSON.stringify(rows.body), table).not.toMatch(SEALED_PARTS);
      expect(JSON.stringify(rows.body), table).toContain('"configured":true');
    }
  });
});
