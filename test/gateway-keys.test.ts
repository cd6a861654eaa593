import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { registerGatewayKey, removeGatewayKey } from '../shared/gateway-keys';
import { apiGateway } from '../shared/gateway-keys';
import { scopeOf } from '../shared/tenancy';
import { call } from './helpers/http';
import { platformTestSecrets } from './helpers/platform';
import { testRt } from './helpers/runtime';

/**
 * A stand-in for the API Gateway control-plane endpoint (the one thing that cannot run here),
 * answering with the status codes and bodies API Gateway sends for these calls.
 */
interface Seen {
  method: string;
  url: string;
  body: Record<string, unknown>;
}

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => resolve(data));
  });
}

describe('API Gateway key registration', () => {
  const seen: Seen[] = [];
  let failUsagePlan = false;
  let server: Server;
  let client: APIGatewayClient;

  beforeAll(async () => {
    server = createServer((req, res) => void answer(req, res));
    async function answer(req: IncomingMessage, res: ServerResponse) {
      const text = await body(req);
      const parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      seen.push({ method: req.method!, url: req.url!, body: parsed });
      const json = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(payload));
      };
      if (req.method === 'GET' && req.url?.startsWith('/usageplans')) {
        return json(200, { item: ['free', 'pro', 'enterprise', 'unlimited'].map((plan) => ({ id: `up-${plan}`, name: `CairnApi-${plan}` })).concat([{ id: 'up-other', name: 'Other-pro' }]) });
      }
      if (req.method === 'POST' && req.url === '/apikeys') {
        return json(201, { id: 'k7x9q2w1z0', name: parsed.name, enabled: true, value: parsed.value, createdDate: 1795255200, stageKeys: [] });
      }
      if (req.method === 'POST' && req.url?.startsWith('/usageplans/')) {
        if (failUsagePlan) {
          return json(404, { message: 'Invalid Usage Plan ID specified' }, { 'x-amzn-errortype': 'NotFoundException' });
        }
        return json(201, { id: parsed.keyId, type: 'API_KEY', name: 'key' });
      }
      if (req.method === 'DELETE' && req.url?.startsWith('/apikeys/')) {
        if (req.url === '/apikeys/gone') {
          return json(404, { message: 'Invalid API Key identifier specified' }, { 'x-amzn-errortype': 'NotFoundException' });
        }
        res.writeHead(202);
        return res.end();
      }
      json(400, { message: 'unexpected' }, { 'x-amzn-errortype': 'BadRequestException' });
    }
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const address = server.address() as { port: number };
    client = new APIGatewayClient({
      endpoint: `http://127.0.0.1:${address.port}`,
      region: 'eu-west-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
    });
  });

  afterAll(async () => {
    client.destroy();
    await new Promise((r) => server.close(r));
  });

  it('creates the key with the same value and adds it to the usage plan', async () => {
    seen.length = 0;
    const id = await registerGatewayKey(client, { value: 'cak_value_123456789', name: 'acme-pro', usagePlanId: 'up1234' });
    expect(id).toBe('k7x9q2w1z0');
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual(['POST /apikeys', 'POST /usageplans/up1234/keys']);
    expect(seen[0]!.body).toMatchObject({ name: 'acme-pro', value: 'cak_value_123456789', enabled: true });
    expect(seen[1]!.body).toEqual({ keyId: 'k7x9q2w1z0', keyType: 'API_KEY' });
  });

  it('removes the created key again when the usage plan refuses it', async () => {
    seen.length = 0;
    failUsagePlan = true;
    await expect(
      registerGatewayKey(client, { value: 'cak_value_123456789', name: 'acme-pro', usagePlanId: 'nope' }),
    ).rejects.toThrow(/Usage Plan/);
    failUsagePlan = false;
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual(['POST /apikeys', 'POST /usageplans/nope/keys', 'DELETE /apikeys/k7x9q2w1z0']);
  });

  it('treats deleting a key that is already gone as done', async () => {
    await expect(removeGatewayKey(client, 'gone')).resolves.toBeUndefined();
  });

  it('registers a provisioned tenant’s key in its plan’s usage plan, and undoes everything when that fails', async () => {
    const secrets = platformTestSecrets();
    const rt = { ...testRt, gateway: apiGateway(() => Promise.resolve(client), 'CairnApi-') };
    const app = createLocalApp(rt);
    const admin = { authorization: `Bearer ${secrets.adminToken}` };
    seen.length = 0;
    const tenantId = `gw${Date.now()}`;
    const res = await call(app, 'POST', '/platform/tenants', { headers: admin, body: { name: 'Gateway', tenantId, plan: 'pro' } });
    expect(res.status).toBe(201);
    expect(seen.map((s) => `${s.method} ${s.url?.split('?')[0]}`)).toEqual(['GET /usageplans', 'POST /apikeys', 'POST /usageplans/up-pro/keys']);
    expect(seen[1]!.body).toMatchObject({ name: `${tenantId}-pro`, value: res.body.data.apiKey, enabled: true });
    const [key] = await rt.store.apiKeys.listApiKeys(scopeOf(tenantId));
    expect(key).toMatchObject({ plan: 'pro', gatewayKeyId: 'k7x9q2w1z0' });

    seen.length = 0;
    failUsagePlan = true;
    const failed = await call(app, 'POST', '/platform/tenants', { headers: admin, body: { name: 'Gateway', tenantId: `${tenantId}b`, plan: 'free' } });
    failUsagePlan = false;
    expect(failed.status).toBe(502);
    expect(failed.body.error).toMatchObject({ code: 'UPSTREAM_ERROR', details: { provider: 'apigateway' } });
    // The plan ids were read once; the created key was deleted again; the tenant was not kept.
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual(['POST /apikeys', 'POST /usageplans/up-free/keys', 'DELETE /apikeys/k7x9q2w1z0']);
    expect(await rt.store.apiKeys.getTenant(scopeOf(`${tenantId}b`))).toBeUndefined();
    const retried = await call(app, 'POST', '/platform/tenants', { headers: admin, body: { name: 'Gateway', tenantId: `${tenantId}b`, plan: 'free' } });
    expect(retried.status).toBe(201);
  });
});
