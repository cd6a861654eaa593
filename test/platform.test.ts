import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { issueToken } from '../shared/platform/access-tokens';
import { scopeOf } from '../shared/tenancy';
import { call } from './helpers/http';
import { pcall, platformTestSecrets, provision, type ProvisionedTenant } from './helpers/platform';
import { testRt } from './helpers/runtime';

const app = createLocalApp(testRt);
const secrets = platformTestSecrets();
const admin = { authorization: `Bearer ${secrets.adminToken}` };

/** Flips one character of a token's payload, keeping its shape. */
function tamper(token: string): string {
  const [prefix, payload, signature] = token.split('.') as [string, string, string];
  const i = Math.floor(payload.length / 2);
  const flipped = payload[i] === 'A' ? 'B' : 'A';
  return `${prefix}.${payload.slice(0, i)}${flipped}${payload.slice(i + 1)}.${signature}`;
}

describe('platform tenants and tokens', () => {
  let a: ProvisionedTenant;
  let b: ProvisionedTenant;
  beforeAll(async () => {
    a = await provision(app, secrets.adminToken);
    b = await provision(app, secrets.adminToken);
  });

  it('lists the platform services and the scope headers without credentials', async () => {
    const res = await call(app, 'GET', '/platform/tenants');
    expect(res.status).toBe(200);
    expect(res.body.data.scopeHeaders).toEqual({ tenant: 'X-Tenant-Id', schema: 'X-PG-Schema' });
    expect(res.body.data.services.map((s: { id: string }) => s.id)).toEqual(['tenants', 'login', 'db', 'agent', 'memory', 'workflow', 'knowledge']);
  });

  it('provisions a tenant: schema t_<id>, a cpt_v1 token and a working public API key', async () => {
    const res = await call(app, 'POST', '/platform/tenants', { headers: admin, body: { name: 'Acme', tenantId: 'acme-corp-' + Date.now(), plan: 'pro' } });
    expect(res.status).toBe(201);
    const { tenant, accessToken, apiKey } = res.body.data;
    expect(tenant).toMatchObject({ name: 'Acme', plan: 'pro', schema: `t_${tenant.id}` });
    expect(new Date(tenant.createdAt).toISOString()).toBe(tenant.createdAt);
    expect((await testRt.store.apiKeys.getTenant(scopeOf(tenant.id)))?.createdAt).toBe(tenant.createdAt); // the stored record, not a second clock reading
    expect(accessToken).toMatch(/^cpt_v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    const pub = await call(app, 'GET', '/v1/agents', { key: apiKey });
    expect(pub.status).toBe(200);
    expect(pub.headers.get('x-ratelimit-limit')).toBe('1000'); // pro: 10 × the free 100/min
    const session = await pcall(app, 'GET', '/platform/login/session', accessToken);
    expect(session.status).toBe(200);
    expect(session.body.data).toMatchObject({ tenantId: tenant.id, schema: `t_${tenant.id}` });
    expect(session.body.data.tokenId).toMatch(/^tok_/);
    expect(Date.parse(session.body.data.expiresAt)).toBeGreaterThan(Date.now());
  });

  it('gives cairn- tenants the public schema and generates ids when none is given', async () => {
    const own = await call(app, 'POST', '/platform/tenants', { headers: admin, body: { name: 'Ops', tenantId: `cairn-ops${Date.now()}` } });
    expect(own.status).toBe(201);
    expect(own.body.data.tenant).toMatchObject({ schema: 'public', plan: 'free' });
    const generated = await call(app, 'POST', '/platform/tenants', { headers: admin, body: { name: 'Anon' } });
    expect(generated.body.data.tenant.id).toMatch(/^ten_[0-9a-z]{26}$/);
    expect(generated.body.data.tenant.schema).toBe(`t_${generated.body.data.tenant.id}`);
  });

  it('refuses provisioning without the admin credential (401) and a duplicate tenant id (409)', async () => {
    expect((await call(app, 'POST', '/platform/tenants', { body: { name: 'x' } })).status).toBe(401);
    const wrong = await call(app, 'POST', '/platform/tenants', { headers: { authorization: 'Bearer not-the-admin-token' }, body: { name: 'x' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('UNAUTHORIZED');
    // A tenant's own access token is not the admin credential.
    expect((await call(app, 'POST', '/platform/tenants', { headers: { authorization: `Bearer ${a.accessToken}` }, body: { name: 'x' } })).status).toBe(401);
    const dup = await call(app, 'POST', '/platform/tenants', { headers: admin, body: { name: 'again', tenantId: a.tenantId } });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'tenantId' } });
    const bad = await call(app, 'POST', '/platform/tenants', { headers: admin, body: { name: 'x', tenantId: 'Bad Id!' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('tenantId');
  });

  it('answers 401 to missing, malformed, tampered, foreign-key, expired and revoked tokens', async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = { tenantId: a.tenantId, schema: a.schema, tokenId: 'tok_0123456789abcdefghjkmnpqrs', issuedAt: now - 100 };
    const cases: Array<[string, string | undefined]> = [
      ['missing', undefined],
      ['malformed', 'cpt_v1.nope'],
      ['an API key', a.apiKey],
      ['tampered payload', tamper(a.accessToken)],
      ['signature of another token', `${a.accessToken.split('.').slice(0, 2).join('.')}.${b.accessToken.split('.')[2]}`],
      ['signed with another key', issueToken('another-key-of-at-least-32-characters!!', claims)],
      ['expired', issueToken(secrets.tokenKey, { ...claims, expiresAt: now - 1 })],
      ['schema not the tenant’s', issueToken(secrets.tokenKey, { ...claims, schema: b.schema })],
    ];
    for (const [name, token] of cases) {
      const res = await call(app, 'GET', '/platform/login/session', { headers: token ? { authorization: `Bearer ${token}` } : {} });
      expect(res.status, name).toBe(401);
      expect(res.body.error.code, name).toBe('UNAUTHORIZED');
    }
    // The same claims, genuinely signed and unexpired, are accepted: the cases above fail for their flaw alone.
    const genuine = issueToken(secrets.tokenKey, { ...claims, expiresAt: now + 60 });
    expect((await pcall(app, 'GET', '/platform/login/session', genuine)).status).toBe(200);
  });

  it('revokes the presented token only, and issues a new one with the admin credential', async () => {
    const issued = await call(app, 'POST', `/platform/tenants/${a.tenantId}/tokens`, { headers: admin, body: { ttlSeconds: 600 } });
    expect(issued.status).toBe(201);
    const token = issued.body.data.accessToken as string;
    expect((await pcall(app, 'GET', '/platform/login/session', token)).status).toBe(200);
    const revoked = await pcall(app, 'DELETE', '/platform/login/session', token);
    expect(revoked.status).toBe(200);
    expect(revoked.body.data).toEqual({ tokenId: issued.body.data.tokenId, revoked: true });
    expect((await pcall(app, 'GET', '/platform/login/session', token)).status).toBe(401);
    expect((await pcall(app, 'GET', '/platform/agent', token)).status).toBe(401);
    expect((await pcall(app, 'GET', '/platform/login/session', a.accessToken)).status).toBe(200);
    expect((await call(app, 'POST', '/platform/tenants/nobody-here/tokens', { headers: admin, body: {} })).status).toBe(404);
    // The admin revokes a token by its id, without holding it.
    const leaked = await call(app, 'POST', `/platform/tenants/${a.tenantId}/tokens`, { headers: admin, body: {} });
    expect((await pcall(app, 'GET', '/platform/login/session', leaked.body.data.accessToken)).status).toBe(200);
    const byId = await call(app, 'DELETE', `/platform/tenants/${a.tenantId}/tokens/${leaked.body.data.tokenId}`, { headers: admin });
    expect(byId.status).toBe(200);
    expect((await pcall(app, 'GET', '/platform/login/session', leaked.body.data.accessToken)).status).toBe(401);
    expect((await call(app, 'DELETE', `/platform/tenants/${a.tenantId}/tokens/${leaked.body.data.tokenId}`, { headers: { authorization: `Bearer ${a.accessToken}` } })).status).toBe(401);
    // The body is optional: without one the token gets the default lifetime.
    const plain = await call(app, 'POST', `/platform/tenants/${a.tenantId}/tokens`, { headers: admin });
    expect(plain.status).toBe(201);
    expect(Date.parse(plain.body.data.expiresAt) - Date.now()).toBeGreaterThan(29 * 86_400_000);
  });

  it('answers 403 when X-Tenant-Id or X-PG-Schema differs from the token, and accepts matching ones', async () => {
    const paths = ['/platform/login/session', '/platform/agent', '/platform/db/ops', '/platform/knowledge/collections', '/platform/workflow/definitions'];
    for (const path of paths) {
      const tenant = await pcall(app, 'GET', path, a.accessToken, { headers: { 'x-tenant-id': b.tenantId } });
      expect(tenant.status, path).toBe(403);
      expect(tenant.body.error).toMatchObject({ code: 'FORBIDDEN', details: { field: 'X-Tenant-Id' } });
      const schema = await pcall(app, 'GET', path, a.accessToken, { headers: { 'x-pg-schema': 'public' } });
      expect(schema.status, path).toBe(403);
      const matching = await pcall(app, 'GET', path, a.accessToken, { headers: { 'x-tenant-id': a.tenantId, 'x-pg-schema': a.schema } });
      expect(matching.status, path).toBe(200);
    }
  });
});

describe('platform agents, workflow definitions and knowledge collections', () => {
  let a: ProvisionedTenant;
  let b: ProvisionedTenant;
  beforeAll(async () => {
    a = await provision(app, secrets.adminToken);
    b = await provision(app, secrets.adminToken);
  });

  it('serves the same agent records as /v1/agents, with PATCH as a validated partial update', async () => {
    const created = await call(app, 'POST', '/v1/agents', { key: a.apiKey, body: { name: 'Support', model: 'gpt-4', temperature: 0.3 } });
    const id = created.body.data.id;
    const listed = await pcall(app, 'GET', '/platform/agent', a.accessToken);
    expect(listed.body.data.map((x: { id: string }) => x.id)).toEqual([id]);

    const patched = await pcall(app, 'PATCH', `/platform/agent/${id}`, a.accessToken, { body: { description: 'Now patched', temperature: null } });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ name: 'Support', model: 'gpt-4', description: 'Now patched', temperature: 0.7, version: 2 });
    expect((await call(app, 'GET', `/v1/agents/${id}`, { key: a.apiKey })).body.data.description).toBe('Now patched');

    const bad = await pcall(app, 'PATCH', `/platform/agent/${id}`, a.accessToken, { body: { temperature: 5 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toMatchObject({ field: 'temperature', reason: 'must be between 0 and 2' });
    const unknown = await pcall(app, 'PATCH', `/platform/agent/${id}`, a.accessToken, { body: { colour: 'red' } });
    expect(unknown.body.error.details.field).toBe('colour');

    const made = await pcall(app, 'POST', '/platform/agent', a.accessToken, { body: { name: 'Platform-made', model: 'local/extractive' } });
    expect(made.status).toBe(201);
    expect((await call(app, 'GET', `/v1/agents/${made.body.data.id}`, { key: a.apiKey })).status).toBe(200);

    // Tenant B sees none of it.
    expect((await pcall(app, 'GET', `/platform/agent/${id}`, b.accessToken)).status).toBe(404);
    expect((await pcall(app, 'PATCH', `/platform/agent/${id}`, b.accessToken, { body: { name: 'hijack' } })).status).toBe(404);
    expect((await pcall(app, 'DELETE', `/platform/agent/${id}`, b.accessToken)).status).toBe(404);
    expect((await pcall(app, 'GET', '/platform/agent', b.accessToken)).body.data).toEqual([]);

    const deleted = await pcall(app, 'DELETE', `/platform/agent/${id}`, a.accessToken);
    expect(deleted.body.data).toEqual({ id, deleted: true });
    expect((await call(app, 'GET', `/v1/agents/${id}`, { key: a.apiKey })).status).toBe(404);
  });

  const definition = {
    name: 'Triage',
    steps: [
      { id: 'classify', type: 'classification', model: 'local/classifier', categories: ['billing', 'technical'], input: '{{input}}' },
      { type: 'generation', model: 'local/extractive', prompt: 'Billing question: {{input}} ({{category}})', when: { step: 'classify', category: 'billing' } },
      { type: 'generation', model: 'local/extractive', prompt: 'Tech: {{steps.classify.output.category}}', dependsOn: ['classify'], when: { step: 'classify', category: 'technical' } },
    ],
  };

  it('compiles a definition: normalised steps, resolved templates, order and branches; compileOnly stores nothing', async () => {
    const res = await pcall(app, 'POST', '/platform/workflow/definitions', a.accessToken, { body: { ...definition, compileOnly: true } });
    expect(res.status).toBe(200);
    const { compiled } = res.body.data;
    expect(res.body.data.definition).toBeUndefined();
    expect(compiled.valid).toBe(true);
    expect(compiled.steps.map((s: { id: string }) => s.id)).toEqual(['classify', 'step2', 'step3']);
    expect(compiled.steps[0].config).toMatchObject({ categories: ['billing', 'technical'] });
    expect(compiled.plan.order).toEqual(['classify', 'step2', 'step3']);
    expect(compiled.plan.steps[1].templates).toEqual([
      { field: 'prompt', variable: 'input', from: 'request' },
      { field: 'prompt', variable: 'category', from: 'classify' },
    ]);
    expect(compiled.plan.branches).toEqual([
      { step: 'classify', category: 'billing', runs: ['step2'] },
      { step: 'classify', category: 'technical', runs: ['step3'] },
    ]);
    expect((await pcall(app, 'GET', '/platform/workflow/definitions', a.accessToken)).body.data).toEqual([]);
  });

  it('stores a valid definition as a /v1 workflow, and reports an invalid one without storing it', async () => {
    const res = await pcall(app, 'POST', '/platform/workflow/definitions', a.accessToken, { body: definition });
    expect(res.status).toBe(200);
    const id = res.body.data.definition.id;
    expect(id).toMatch(/^wf_/);
    expect((await call(app, 'GET', `/v1/workflows/${id}`, { key: a.apiKey })).body.data.steps).toHaveLength(3);

    const broken = { name: 'Broken', steps: [{ type: 'generation', model: 'local/x', prompt: 'Use {{steps.nowhere.output.text}}' }] };
    const invalid = await pcall(app, 'POST', '/platform/workflow/definitions', a.accessToken, { body: broken });
    expect(invalid.status).toBe(200);
    expect(invalid.body.data.compiled.valid).toBe(false);
    expect(invalid.body.data.compiled.errors).toEqual([{ path: 'steps[0].config.prompt', message: '{{steps.nowhere.output.text}} names step nowhere, which does not exist' }]);
    expect(invalid.body.data.definition).toBeNull();
    const listed = await pcall(app, 'GET', '/platform/workflow/definitions', a.accessToken);
    expect(listed.body.data.map((w: { id: string }) => w.id)).toEqual([id]);
    expect((await pcall(app, 'GET', '/platform/workflow/definitions', b.accessToken)).body.data).toEqual([]);
    const shape = await pcall(app, 'POST', '/platform/workflow/definitions', a.accessToken, { body: { steps: [] } });
    expect(shape.status).toBe(400);
  });

  it('lists knowledge sources as collections of the tenant only', async () => {
    const ks = await call(app, 'POST', '/v1/knowledge-sources', {
      key: a.apiKey,
      body: { name: 'Docs', type: 'file-collection', files: [{ path: 'a.md', content: '# A\nAlpha.' }] },
    });
    expect(ks.status).toBe(201);
    const res = await pcall(app, 'GET', '/platform/knowledge/collections', a.accessToken);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([{ id: ks.body.data.id, name: 'Docs', type: 'file-collection', status: 'created', documents: 0, chunks: 0, updatedAt: ks.body.data.updatedAt }]);
    expect(res.body.meta.pagination).toEqual({ limit: 20, nextCursor: null, hasMore: false });
    expect((await pcall(app, 'GET', '/platform/knowledge/collections', b.accessToken)).body.data).toEqual([]);
  });

  it('serves its OpenAPI 3.1 document and the API error body for unknown routes', async () => {
    const doc = await call(app, 'GET', '/platform/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toBe('3.1.0');
    const paths = Object.keys(doc.body.paths);
    for (const p of ['/platform/tenants', '/platform/login/session', '/platform/db/ops', '/platform/agent', '/platform/agent/{agentId}', '/platform/memory/query', '/platform/workflow/definitions', '/platform/knowledge/collections']) {
      expect(paths).toContain(p);
    }
    expect(doc.body.components.securitySchemes.PlatformToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    const missing = await pcall(app, 'GET', '/platform/nothing', a.accessToken);
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('NOT_FOUND');
  });
});
