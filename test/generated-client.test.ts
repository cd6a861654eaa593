import type { ServerType } from '@hono/node-server';
import createClient from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer } from '../local/http-server';
import { createLocalApp } from '../local/local-app';
import type { paths as PlatformPaths } from '../shared/contract/platform-api';
import type { paths } from '../shared/contract/public-api';
import { testPlatformSecrets, testRt } from './helpers/runtime';
import { newTenant } from './helpers/tenant';

/**
 * The contract as a client generator reads it: types made by openapi-typescript from the served
 * documents (`npm run openapi`), calls made by openapi-fetch, and not one cast. If a schema says
 * less or other than the server does, this file stops type-checking or these calls fail.
 */
describe('a client generated from the OpenAPI documents', () => {
  let server: ServerType;
  let baseUrl: string;
  beforeAll(async () => {
    server = await startHttpServer(createLocalApp(testRt).fetch, { port: 0, hostname: '127.0.0.1', clock: testRt.clock });
    baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('creates an agent, converses with it, creates a workflow and executes it', async () => {
    const { apiKey } = await newTenant();
    const cairn = createClient<paths, 'application/json'>({ baseUrl, headers: { 'X-API-Key': apiKey } });

    const agent = await cairn.POST('/v1/agents', { body: { name: 'Support', model: 'gpt-4', capabilities: ['chat'] } });
    expect(agent.response.status).toBe(201);
    expect(agent.response.headers.get('location')).toBe(`/v1/agents/${agent.data!.data.id}`);
    const agentId = agent.data!.data.id;

    const reply = await cairn.POST('/v1/agents/{agentId}/converse', { params: { path: { agentId } }, body: { message: 'Hello there', context: { userId: 'u1' } } });
    expect(reply.response.status).toBe(200);
    expect(reply.data!.data.reply.length).toBeGreaterThan(0);
    expect(reply.data!.data.sessionId).toMatch(/^ses_/);

    const workflow = await cairn.POST('/v1/workflows', {
      body: { name: 'Greeter', steps: [{ type: 'generation', config: { model: 'gpt-4', prompt: 'Greet {{user_message}}' } }] },
    });
    expect(workflow.response.status).toBe(201);
    const execution = await cairn.POST('/v1/workflows/{workflowId}/execute', { params: { path: { workflowId: workflow.data!.data.id } }, body: { input: 'Ada' } });
    expect(execution.response.status).toBe(200);
    expect(execution.data!.data.status).toBe('succeeded');

    const missing = await cairn.GET('/v1/agents/{agentId}', { params: { path: { agentId: 'agt_00000000000000000000000000' } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error!.error.code).toBe('NOT_FOUND');
  });

  it('provisions a tenant with the admin scheme and uses its access token', async () => {
    const admin = createClient<PlatformPaths, 'application/json'>({ baseUrl, headers: { Authorization: `Bearer ${testPlatformSecrets.adminToken}` } });
    const provisioned = await admin.POST('/platform/tenants', { body: { name: 'Generated client' } });
    expect(provisioned.response.status).toBe(201);
    const { accessToken, tenant } = provisioned.data!.data;

    const platform = createClient<PlatformPaths, 'application/json'>({ baseUrl, headers: { Authorization: `Bearer ${accessToken}` } });
    const session = await platform.GET('/platform/login/session', { params: { header: { 'X-Tenant-Id': tenant.id } } });
    expect(session.data!.data.tenantId).toBe(tenant.id);
    const created = await platform.POST('/platform/agent', { body: { name: 'Platform agent', model: 'gpt-4' } });
    expect(created.response.status).toBe(201);
    const listed = await platform.GET('/platform/agent', { params: { query: { limit: 10 } } });
    expect(listed.data!.data.map((a) => a.id)).toContain(created.data!.data.id);
  });
});
