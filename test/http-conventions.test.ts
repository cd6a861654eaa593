import { describe, expect, it } from 'vitest';
import { createAgentsApp } from '../functions/agents/app';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { platformTestSecrets, provision } from './helpers/platform';
import { newTenant } from './helpers/tenant';
import { testRt } from './helpers/runtime';

const app = createLocalApp(testRt);

describe('HTTP conventions', () => {
  it('answers 401 in the error body for a missing, unknown or revoked key', async () => {
    const t = await newTenant();
    const noCache = createAgentsApp(testRt, { apiKeyCacheSeconds: 0 });
    expect((await call(noCache, 'GET', '/v1/agents', { key: t.apiKey })).status).toBe(200);
    const missing = await call(noCache, 'GET', '/v1/agents');
    expect(missing.status).toBe(401);
    expect(missing.body.error).toEqual({ code: 'UNAUTHORIZED', message: 'Missing API key: send it as X-API-Key: <key> or Authorization: Bearer <key>' });
    expect((await call(noCache, 'GET', '/v1/agents', { key: 'cak_unknown_0123456789abcdef' })).status).toBe(401);
    expect(await testRt.store.apiKeys.revokeApiKey(t.scope, t.keyId)).toMatchObject({ keyId: t.keyId, tenantId: t.scope.tenantId });
    expect(await testRt.store.apiKeys.revokeApiKey(t.scope, t.keyId)).toBeUndefined();
    const revoked = await call(noCache, 'GET', '/v1/agents', { key: t.apiKey });
    expect(revoked.status).toBe(401);
    expect(revoked.body.meta.requestId).toBe(revoked.headers.get('x-request-id'));
  });

  it('answers 415 for a body that is not JSON and 400 for malformed JSON', async () => {
    const t = await newTenant();
    const form = await call(app, 'POST', '/v1/agents', {
      key: t.apiKey,
      rawBody: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(415);
    expect(form.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    const untyped = await call(app, 'POST', '/v1/agents', { key: t.apiKey, rawBody: '{"name":"x"}' });
    expect(untyped.status).toBe(415);
    for (const raw of ['{"name":', 'not json', '']) {
      const res = await call(app, 'POST', '/v1/agents', { key: t.apiKey, rawBody: raw, headers: { 'content-type': 'application/json' } });
      expect(res.status, raw).toBe(400);
      expect(res.body.error.code).toBe('INVALID_REQUEST');
    }
    const array = await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: [1, 2] });
    expect(array.status).toBe(400);
    expect(array.body.error.details.field).toBe('body');
  });

  it('answers 400 naming the field, never 500, for JSON that cannot be stored as sent', async () => {
    const t = await newTenant();
    const admin = { authorization: `Bearer ${platformTestSecrets().adminToken}` };
    const tenant = await provision(app, admin.authorization.slice(7));
    const workflow = (await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body: { name: 'w', steps: [{ type: 'generation', model: 'gpt-4', prompt: 'hi' }] } })).body.data.id;
    const json = { 'content-type': 'application/json' };
    const cases: Array<[string, string, Record<string, string>, string, string]> = [
      ['/v1/agents', t.apiKey, json, '{"name":"a","model":"gpt-4","temperature":1e400}', 'temperature'],
      [`/v1/workflows/${workflow}/execute`, t.apiKey, json, '{"input":"x","parameters":{"__proto__":{"isAdmin":true}}}', 'parameters.__proto__'],
      [`/v1/workflows/${workflow}/execute`, t.apiKey, json, '{"input":"x","parameters":{"n":9007199254740993}}', 'parameters.n'],
      ['/platform/db/ops', '', { ...json, authorization: `Bearer ${tenant.accessToken}` }, '{"operation":"put","table":"records","item":{"collection":"c","data":{"constructor":1}}}', 'item.data.constructor'],
      ['/platform/db/ops', '', { ...json, authorization: `Bearer ${tenant.accessToken}` }, '{"operation":"put","table":"records","item":{"collection":"c","data":{"big":1e308}}}', 'item.data.big'],
      ['/platform/db/ops', '', { ...json, authorization: `Bearer ${tenant.accessToken}` }, `{"operation":"put","table":"records","item":{"collection":"c","data":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}}`, `item.data${'.a'.repeat(30)}`],
    ];
    for (const [path, key, headers, rawBody, field] of cases) {
      const res = await call(app, 'POST', path, { ...(key ? { key } : {}), rawBody, headers });
      expect(res.status, `${path} ${rawBody.slice(0, 60)}`).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field } });
    }
  });

  it('quotes at most ~100 characters of a rejected value: a megabyte sent is not a megabyte answered', async () => {
    const t = await newTenant();
    const huge = 'x'.repeat(1000 * 1000); // just under the body limit
    const cases = [
      await call(app, 'POST', '/v1/chat/completions', { key: t.apiKey, body: { model: huge, messages: [{ role: 'user', content: 'hi' }] } }),
      await call(app, 'POST', '/v1/chat/completions', { key: t.apiKey, body: { model: `agt_${huge}`, messages: [{ role: 'user', content: 'hi' }] } }),
      await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'x', model: 'gpt-4', tools: [{ type: 'http', name: 't', description: 'd', url: 'https://example.com', parameters: { type: 'object', properties: {}, required: [huge] } }] } }),
      await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'x', model: 'gpt-4', [huge]: 1 } }),
      await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'x', model: huge } }),
      await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'x', model: 'gpt-4', tools: [{ type: 'http', name: 't', description: 'd', url: 'https://example.com', policy: [{ when: huge.slice(0, 1900), action: 'deny' }] }] } }),
    ];
    for (const [i, res] of cases.entries()) {
      expect(res.status, `case ${i}`).toBeGreaterThanOrEqual(400);
      expect(res.status, `case ${i}`).toBeLessThan(500);
      const size = JSON.stringify(res.body).length;
      expect(size, `case ${i}: ${JSON.stringify(res.body).slice(0, 300)}`).toBeLessThan(3000);
      expect(JSON.stringify(res.body), `case ${i}`).not.toContain('x'.repeat(1001));
    }
  });

  it('answers 413 for a body over the group limit', async () => {
    const t = await newTenant();
    const res = await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'x', model: 'gpt-4', instructions: 'y'.repeat(1024 * 1024) } });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers 404 in the error body for unknown routes and ids of the wrong shape', async () => {
    const t = await newTenant();
    const unknown = await call(app, 'GET', '/v2/nothing');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');
    expect(unknown.headers.get('x-request-id')).toBeTruthy();
    const inGroup = await call(app, 'GET', '/v1/agents/agt_x/unknown', { key: t.apiKey });
    expect(inGroup.status).toBe(404);
    expect(inGroup.body.error.code).toBe('NOT_FOUND');
    const badId = await call(app, 'GET', '/v1/agents/not-an-id', { key: t.apiKey });
    expect(badId.status).toBe(404);
    const wrongKind = await call(app, 'GET', '/v1/agents/wf_01m7y62dvspbq7k3p58zfb7w0n', { key: t.apiKey });
    expect(wrongKind.status).toBe(404);
  });

  it("echoes a caller's sane X-Request-Id and replaces an unsafe one", async () => {
    const t = await newTenant();
    const given = await call(app, 'GET', '/v1/agents', { key: t.apiKey, headers: { 'x-request-id': 'trace-12345678' } });
    expect(given.headers.get('x-request-id')).toBe('trace-12345678');
    expect(given.body.meta.requestId).toBe('trace-12345678');
    const unsafe = await call(app, 'GET', '/v1/agents', { key: t.apiKey, headers: { 'x-request-id': 'x"><script>' } });
    expect(unsafe.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('serves /healthz', async () => {
    const res = await call(app, 'GET', '/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });
});
