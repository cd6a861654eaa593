import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { agents } from '../shared/agents/agents';
import { callableTools, runTool, toolContext } from '../shared/agents/agent-tools';
import type { OutboundPolicy } from '../shared/net/outbound';
import type { TenantScope } from '../shared/tenancy';
import { call } from './helpers/http';
import { testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/**
 * Export and import: an agent or a workflow as a portable document with its versions and aliases,
 * no secret in it (placeholders instead), imported as a new resource with the same version numbers
 * and routing; secrets filled from the request, or the tool imported unusable and said so.
 */
const app = createLocalApp(testRt);
const local: OutboundPolicy = { allowedHosts: new Set(), allowPrivateNetworks: true };

/** A shop on this machine that answers only the right bearer token. */
const shop = createServer((req, res) => {
  if (req.headers.authorization !== 'Bearer token-of-v2') return res.writeHead(401).end('no');
  res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"shipped"}');
});
let base = '';
const tool = (token: string) => ({ type: 'http', name: 'order_status', description: 'Looks up an order', url: `${base}/orders/{{id}}`, parameters: { type: 'object', properties: { id: { type: 'string' } } }, auth: { type: 'bearer', token } });

const api = (t: TestTenant, method: string, path: string, body?: unknown, headers?: Record<string, string>) => call(app, method, path, { key: t.apiKey, ...(body === undefined ? {} : { body }), ...(headers ? { headers } : {}) });

/** The tools a turn of the stored draft would give the model, and a call of the first as a turn makes it. */
async function toolsOfDraft(scope: TenantScope, agentId: string) {
  const agent = await agents.get(testRt, scope, agentId);
  const context = toolContext(testRt, scope, agent, { policy: local });
  const tools = await callableTools(context);
  return { names: tools.map((t) => t.name), call: () => runTool(tools[0]!, { id: '7' }, context) };
}

describe('agent export and import', () => {
  let from: TestTenant;
  let to: TestTenant;
  let agentId: string;
  let exported: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

  beforeAll(async () => {
    await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(shop.address() as { port: number }).port}`;
    [from, to] = await Promise.all([newTenant(), newTenant()]);
    agentId = (await api(from, 'POST', '/v1/agents', { name: 'Portable', model: 'local/extractive', instructions: 'first', tools: [tool('token-of-v1')] })).body.data.id;
    await api(from, 'POST', `/v1/agents/${agentId}/versions`, { description: 'first' });
    await api(from, 'PUT', `/v1/agents/${agentId}`, { name: 'Portable', model: 'local/extractive', instructions: 'second', tools: [tool('token-of-v2')] });
    await api(from, 'POST', `/v1/agents/${agentId}/versions`, { description: 'second' });
    await api(from, 'PUT', `/v1/agents/${agentId}/aliases/live`, { routing: [{ version: 1, weight: 10 }, { version: 2, weight: 90 }] });
    await api(from, 'PUT', `/v1/agents/${agentId}/aliases/canary`, { routing: [{ version: 2 }] });
  });
  afterAll(async () => {
    shop.closeAllConnections();
    await new Promise<void>((resolve) => shop.close(() => resolve()));
  });

  it('exports the draft, every version and alias with each secret a placeholder, and no secret', async () => {
    const res = await api(from, 'GET', `/v1/agents/${agentId}/export`);
    expect(res.status).toBe(200);
    exported = res.body.data;
    expect(exported).toMatchObject({
      format: 'cairn.agent/v1',
      agent: { name: 'Portable', instructions: 'second', tools: [{ name: 'order_status', auth: { type: 'bearer', token: '${secret:tools.order_status.auth~2}' } }] },
      versions: [
        { version: 1, description: 'first', agent: { instructions: 'first', tools: [{ auth: { type: 'bearer', token: '${secret:tools.order_status.auth}' } }] } },
        { version: 2, description: 'second', agent: { instructions: 'second', tools: [{ auth: { token: '${secret:tools.order_status.auth~2}' } }] } },
      ],
      aliases: expect.arrayContaining([
        { name: 'live', routing: [{ version: 1, weight: 10 }, { version: 2, weight: 90 }] },
        { name: 'canary', routing: [{ version: 2, weight: 100 }] },
      ]),
      placeholders: expect.arrayContaining([
        { name: 'tools.order_status.auth', usedIn: [1] },
        { name: 'tools.order_status.auth~2', usedIn: [2, 'draft'] },
      ]),
    });
    expect(exported.placeholders).toHaveLength(2);
    expect(exported.agent).not.toHaveProperty('id');
    expect(exported.agent).not.toHaveProperty('version');
    const text = JSON.stringify(res.body);
    for (const hidden of ['token-of-v1', 'token-of-v2', 'sealed', '"iv"', '"wrap"', 'configured']) expect(text).not.toContain(hidden);
    expect((await api(from, 'GET', '/v1/agents/agt_01kaaaaaaaaaaaaaaaaaaaaaaa/export')).status).toBe(404);
  });

  it('imports a new agent with the same versions and aliases, its secrets filled from the request and usable', async () => {
    const res = await api(to, 'POST', '/v1/agents/import', { ...exported, secrets: { 'tools.order_status.auth': 'token-of-v1', 'tools.order_status.auth~2': 'token-of-v2' } });
    expect(res.status).toBe(201);
    const id = res.body.data.agent.id;
    expect(id).not.toBe(agentId);
    expect(res.headers.get('location')).toBe(`/v1/agents/${id}`);
    expect(res.body.data).toMatchObject({ agent: { name: 'Portable', instructions: 'second', tools: [{ auth: { type: 'bearer', configured: true } }] }, versions: [1, 2], unfilledSecrets: [] });
    expect(res.body.data.aliases.sort()).toEqual(['canary', 'live']);
    expect((await api(to, 'GET', `/v1/agents/${id}/versions/1`)).body.data).toMatchObject({ version: 1, description: 'first', createdAt: exported.versions[0].createdAt, agent: { id, instructions: 'first' } });
    expect((await api(to, 'GET', `/v1/agents/${id}/aliases/live`)).body.data.routing).toEqual([{ version: 1, weight: 10 }, { version: 2, weight: 90 }]);
    // The alias is recorded on its versions: version 2 cannot be deleted under it.
    expect((await api(to, 'DELETE', `/v1/agents/${id}/versions/2`)).status).toBe(409);
    // The secret works where it was given: the draft's tool reaches the shop with v2's token.
    const tools = await toolsOfDraft(to.scope, id);
    expect(tools.names).toEqual(['order_status']);
    expect(await tools.call()).toEqual({ ok: true, result: '{"status":"shipped"}' });
    // Publishing goes on after the highest imported number; the source agent is untouched.
    expect((await api(to, 'POST', `/v1/agents/${id}/versions`)).body.data.version).toBe(3);
    expect((await api(from, 'GET', `/v1/agents/${agentId}/versions`)).body.data).toHaveLength(2);
    // What is imported exports again as it came, secrets' names included.
    const again = (await api(to, 'GET', `/v1/agents/${id}/export`)).body.data;
    expect(again.versions.slice(0, 2)).toEqual(exported.versions);
    expect(again.agent).toEqual(exported.agent);
  });

  it('imports a tool whose secret is not given as unusable, says so, and a PUT with the secret makes it usable', async () => {
    const res = await api(to, 'POST', '/v1/agents/import', { ...exported, secrets: { 'tools.order_status.auth': 'token-of-v1' } });
    expect(res.status).toBe(201);
    const id = res.body.data.agent.id;
    expect(res.body.data.unfilledSecrets).toEqual([{ name: 'tools.order_status.auth~2', in: ['version 2', 'draft'], effect: expect.stringContaining('configured: false') }]);
    expect(res.body.data.agent.tools[0].auth).toEqual({ type: 'bearer', configured: false });
    expect((await api(to, 'GET', `/v1/agents/${id}/versions/2`)).body.data.agent.tools[0].auth.configured).toBe(false);
    expect((await api(to, 'GET', `/v1/agents/${id}/versions/1`)).body.data.agent.tools[0].auth.configured).toBe(true);
    expect((await toolsOfDraft(to.scope, id)).names).toEqual([]);
    // Sent back as read, it stays unconfigured; given its secret, it is usable.
    const read = (await api(to, 'GET', `/v1/agents/${id}`)).body.data;
    const { id: _i, createdAt: _c, updatedAt: _u, version: _v, ...fields } = read;
    expect((await api(to, 'PUT', `/v1/agents/${id}`, fields)).body.data.tools[0].auth.configured).toBe(false);
    const fixed = await api(to, 'PUT', `/v1/agents/${id}`, { ...fields, tools: [{ ...fields.tools[0], auth: { type: 'bearer', token: 'token-of-v2' } }] });
    expect(fixed.body.data.tools[0].auth).toEqual({ type: 'bearer', configured: true });
    expect(await (await toolsOfDraft(to.scope, id)).call()).toEqual({ ok: true, result: '{"status":"shipped"}' });
  });

  it('refuses a document that does not hold together with a 400 naming its field, and writes nothing', async () => {
    const before = (await api(to, 'GET', '/v1/agents?limit=100')).body.data.length;
    const cases: Array<[unknown, string]> = [
      [{ ...exported, format: 'cairn.workflow/v1' }, 'format'],
      [{ ...exported, agent: 'nope' }, 'agent'],
      [{ ...exported, versions: [exported.versions[0], { ...exported.versions[1], version: 1 }] }, 'versions[1].version'],
      [{ ...exported, aliases: [{ name: 'live', routing: [{ version: 7 }] }] }, 'aliases[0].routing[0].version'],
      [{ ...exported, aliases: [{ name: 'live', routing: [{ version: 1, weight: 30 }, { version: 2, weight: 30 }] }] }, 'aliases[0].routing[1].weight'],
      [{ ...exported, versions: [exported.versions[0], { ...exported.versions[1], agent: { ...exported.versions[1].agent, temperature: 9 } }] }, 'versions[1].agent.temperature'],
      [{ ...exported, agent: { ...exported.agent, knowledgeSourceIds: ['ks_01kaaaaaaaaaaaaaaaaaaaaaaa'] } }, 'agent.knowledgeSourceIds[0]'],
      [{ ...exported, versions: [{ ...exported.versions[0], agent: { ...exported.versions[0].agent, knowledgeSourceIds: ['ks_01kaaaaaaaaaaaaaaaaaaaaaaa'] } }], aliases: [] }, 'versions[0].agent.knowledgeSourceIds[0]'],
    ];
    for (const [body, field] of cases) {
      const res = await api(to, 'POST', '/v1/agents/import', body);
      expect([res.status, res.body.error?.details?.field]).toEqual([400, field]);
    }
    expect((await api(to, 'GET', '/v1/agents?limit=100')).body.data.length).toBe(before);
  });

  it('replaces the exporting deployment’s ids with this one’s, and replays an import retried with its Idempotency-Key', async () => {
    const source = (await api(to, 'POST', '/v1/knowledge-sources', { name: 'Help centre', type: 'file-collection', files: [{ path: 'returns.md', content: '# Returns' }] })).body.data.id;
    const body = { ...exported, agent: { ...exported.agent, knowledgeSourceIds: ['ks_01kaaaaaaaaaaaaaaaaaaaaaaa'], capabilities: ['chat', 'document-search'] }, ids: { ks_01kaaaaaaaaaaaaaaaaaaaaaaa: source } };
    const first = await api(to, 'POST', '/v1/agents/import', body, { 'idempotency-key': 'import-once' });
    expect(first.status).toBe(201);
    expect(first.body.data.agent.knowledgeSourceIds).toEqual([source]);
    const retried = await api(to, 'POST', '/v1/agents/import', body, { 'idempotency-key': 'import-once' });
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(retried.body.data.agent.id).toBe(first.body.data.agent.id);
    expect((await api(to, 'GET', `/v1/agents/${first.body.data.agent.id}/versions`)).body.data).toHaveLength(2);
  });
});

describe('workflow export and import', () => {
  let t: TestTenant;
  let id: string;
  const definition = (token: string) => ({
    name: 'Portable flow',
    steps: [
      { id: 'fetch', type: 'http', config: { url: 'https://shop.example/orders', auth: { type: 'header', name: 'X-Key', value: token } } },
      { id: 'shape', type: 'transform', expression: 'steps.fetch.output.status', dependsOn: ['fetch'] },
    ],
    webhook: { url: 'http://localhost:9/hooks', secret: 'a-webhook-secret-of-16+' },
  });

  beforeAll(async () => {
    t = await newTenant();
    id = (await api(t, 'POST', '/v1/workflows', definition('step-secret'))).body.data.id;
    await api(t, 'POST', `/v1/workflows/${id}/versions`, { description: 'v1' });
    await api(t, 'PUT', `/v1/workflows/${id}/aliases/live`, { routing: [{ version: 1 }] });
  });

  it('exports steps’ and webhook secrets as placeholders and imports them filled, or without them and says what that means', async () => {
    const exported = (await api(t, 'GET', `/v1/workflows/${id}/export`)).body.data;
    expect(exported).toMatchObject({
      format: 'cairn.workflow/v1',
      workflow: { steps: [{ id: 'fetch', config: { auth: { type: 'header', name: 'X-Key', value: '${secret:steps.fetch.config.auth}' } } }, { id: 'shape' }], webhook: { url: 'http://localhost:9/hooks', secret: '${secret:webhook}' } },
      versions: [{ version: 1, description: 'v1' }],
      aliases: [{ name: 'live', routing: [{ version: 1, weight: 100 }] }],
    });
    for (const hidden of ['step-secret', 'a-webhook-secret', 'sealed', 'configured']) expect(JSON.stringify(exported)).not.toContain(hidden);

    const filled = await api(t, 'POST', '/v1/workflows/import', { ...exported, secrets: { 'steps.fetch.config.auth': 'step-secret', webhook: 'a-webhook-secret-of-16+' } });
    expect(filled.status).toBe(201);
    expect(filled.body.data).toMatchObject({ workflow: { steps: [{ config: { auth: { configured: true } } }, {}], webhook: { configured: true } }, versions: [1], aliases: ['live'], unfilledSecrets: [] });

    const bare = await api(t, 'POST', '/v1/workflows/import', exported);
    expect(bare.status).toBe(201);
    expect(bare.body.data.workflow.steps[0].config.auth).toEqual({ type: 'header', name: 'X-Key', configured: false });
    expect(bare.body.data.workflow).not.toHaveProperty('webhook');
    expect(bare.body.data.unfilledSecrets).toEqual([
      { name: 'steps.fetch.config.auth', in: ['version 1', 'draft'], effect: expect.stringContaining('configured: false') },
      { name: 'webhook', in: ['version 1', 'draft'], effect: expect.stringContaining('left out') },
    ]);
    // Ids of the exporting deployment are swapped for this one's, a release named after an id too.
    const agent = (await api(t, 'POST', '/v1/agents', { name: 'Here', model: 'local/extractive' })).body.data.id;
    const elsewhere = 'agt_01kaaaaaaaaaaaaaaaaaaaaaaa';
    const asking = { ...exported, workflow: { ...exported.workflow, steps: [...exported.workflow.steps, { id: 'ask', type: 'agent', config: { agentId: `${elsewhere}:live`, message: '{{input}}' } }] } };
    expect((await api(t, 'POST', '/v1/workflows/import', asking)).body.error.details.field).toBe('workflow.steps[2].config.agentId');
    const swapped = await api(t, 'POST', '/v1/workflows/import', { ...asking, ids: { [elsewhere]: agent } });
    expect(swapped.status).toBe(201);
    expect(swapped.body.data.workflow.steps[2].config.agentId).toBe(`${agent}:live`);

    // The step without its secret fails when it runs, saying why, and is not retried.
    const run = await api(t, 'POST', `/v1/workflows/${bare.body.data.workflow.id}/execute`, { input: 'x' });
    expect(run.body.data.status).toBe('failed');
    expect(JSON.stringify(run.body.data)).toContain('has no secret');
  });
});
