import { describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { fixedJsonServer } from './helpers/json-server';
import { pcall, platformTestSecrets, provision } from './helpers/platform';
import { testLocal, testRt } from './helpers/runtime';
import { newTenant } from './helpers/tenant';

/**
 * Usage accounting through the API: what turns and workflow steps used, counted atomically per
 * day × key × agent/workflow × model, reported grouped with estimated cost.
 */
const app = createLocalApp(testRt);
const otherInstance = createLocalApp(testRt);
const today = () => new Date().toISOString().slice(0, 10);

const shop = fixedJsonServer({ status: 'shipped' });

async function setUp() {
  const t = await newTenant();
  const second = await testRt.store.apiKeys.createApiKey(t.scope, { plan: 'enterprise' });
  const ks = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'kb', type: 'file-collection', files: [{ path: 'returns.md', content: '# Returns\n\nItems can be returned within 30 days of delivery.' }] } });
  await call(app, 'POST', `/v1/knowledge-sources/${ks.body.data.id}/connect`, { key: t.apiKey, body: {} });
  await testLocal.ingestion!.drain();
  const agent = (await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Support', model: 'gpt-4', capabilities: ['chat', 'document-search'], knowledgeSourceIds: [ks.body.data.id] } })).body.data.id as string;
  return { t, second: { apiKey: second.apiKey, keyId: second.summary.keyId }, agent };
}

describe('usage', () => {
  it('counts every turn exactly, across instances and keys, and groups it by key, agent, model and day', async () => {
    const { t, second, agent } = await setUp();
    const ask = (instance: typeof app, key: string) => call(instance, 'POST', `/v1/agents/${agent}/converse`, { key, body: { message: 'How long do I have to return an item?' } });
    // 12 turns at once: half on another instance, a third with the tenant's second key.
    const turns = await Promise.all(Array.from({ length: 12 }, (_, i) => ask(i % 2 ? otherInstance : app, i % 3 === 0 ? second.apiKey : t.apiKey)));
    for (const turn of turns) expect(turn.status).toBe(200);
    const sum = (rows: typeof turns) => rows.reduce((s, r) => ({ inputTokens: s.inputTokens + r.body.data.usage.inputTokens, outputTokens: s.outputTokens + r.body.data.usage.outputTokens }), { inputTokens: 0, outputTokens: 0 });

    const byKey = await call(app, 'GET', '/v1/usage?groupBy=key', { key: t.apiKey });
    expect(byKey.status).toBe(200);
    const secondKeyTurns = turns.filter((_, i) => i % 3 === 0);
    expect(byKey.body.data.rows).toEqual(
      expect.arrayContaining([
        { group: second.keyId, ...sum(secondKeyTurns), requests: 4, toolCalls: 0, estimatedCostUsd: 0 },
        { group: t.keyId, ...sum(turns.filter((_, i) => i % 3 !== 0)), requests: 8, toolCalls: 0, estimatedCostUsd: 0 },
      ]),
    );
    expect(byKey.body.data.totals).toEqual({ ...sum(turns), requests: 12, toolCalls: 0, estimatedCostUsd: 0 });
    const byAgent = await call(app, 'GET', '/v1/usage?groupBy=agent', { key: t.apiKey });
    expect(byAgent.body.data.rows).toEqual([{ group: agent, ...sum(turns), requests: 12, toolCalls: 0, estimatedCostUsd: 0 }]);
    const byModel = await call(app, 'GET', '/v1/usage?groupBy=model', { key: t.apiKey });
    expect(byModel.body.data.rows.map((r: { group: string }) => r.group)).toEqual([turns[0]!.body.data.model]);
    const byDay = await call(app, 'GET', `/v1/usage?from=${today()}&to=${today()}`, { key: t.apiKey });
    expect(byDay.body.data).toMatchObject({ from: today(), to: today(), groupBy: 'day', rows: [{ group: today(), requests: 12 }] });
    // Another tenant sees none of it.
    const stranger = await newTenant();
    expect((await call(app, 'GET', '/v1/usage', { key: stranger.apiKey })).body.data.totals.requests).toBe(0);
  });

  it('counts tool calls and a paused turn once, and model-backed workflow steps under their workflow', async () => {
    const t = await newTenant();
    const agent = (
      await call(app, 'POST', '/v1/agents', {
        key: t.apiKey,
        body: { name: 'Shop', model: 'gpt-4', tools: [{ type: 'http', name: 'order_status', description: 'Looks up the status of an order by its number', parameters: { type: 'object', properties: { orderId: { type: 'string', pattern: '^[A-Z][0-9]+$' } }, required: ['orderId'] }, url: `${shop.url}/orders/{{orderId}}`, requireApproval: true }] },
      })
    ).body.data.id as string;
    const paused = await call(app, 'POST', `/v1/agents/${agent}/converse`, { key: t.apiKey, body: { message: 'Where is my order A17?' } });
    expect(paused.body.data.status).toBe('requires_action');
    const resumed = await call(app, 'POST', `/v1/agents/${agent}/converse`, { key: t.apiKey, body: { context: { sessionId: paused.body.data.sessionId }, toolApprovals: [{ id: paused.body.data.pendingToolCalls[0].id, approved: true }] } });
    expect(resumed.status).toBe(200);
    const turn = (await call(app, 'GET', '/v1/usage?groupBy=agent', { key: t.apiKey })).body.data.rows[0];
    // Counted at the pause and the rest at the end: the whole turn once.
    expect(turn).toMatchObject({ group: agent, inputTokens: resumed.body.data.usage.inputTokens, outputTokens: resumed.body.data.usage.outputTokens, requests: 2, toolCalls: 1 });

    const wf = (await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body: { name: 'echo', steps: [{ type: 'generation', config: { model: 'gpt-4', prompt: 'Repeat: {{user_message}}' } }] } })).body.data.id as string;
    const ran = await call(app, 'POST', `/v1/workflows/${wf}/execute`, { key: t.apiKey, body: { input: 'hello there', mode: 'sync' } });
    expect(ran.body.data.status).toBe('succeeded');
    expect(ran.body.data).not.toHaveProperty('keyId');
    const byWorkflow = (await call(app, 'GET', '/v1/usage?groupBy=workflow', { key: t.apiKey })).body.data.rows;
    expect(byWorkflow).toEqual([{ group: wf, ...ran.body.data.usage, requests: 1, toolCalls: 0, estimatedCostUsd: 0 }]);
  });

  it('estimates cost from MODEL_PRICES, and says so when a model has no price', async () => {
    const t = await newTenant();
    const day = today();
    await testRt.store.usage.add(t.scope, { day, keyId: t.keyId, subject: 'agent:agt_x', model: 'openai/gpt-4o' }, { inputTokens: 2000, outputTokens: 1000, requests: 1, toolCalls: 0 });
    const priced = await call(app, 'GET', '/v1/usage?groupBy=model', { key: t.apiKey });
    expect(priced.body.data.rows).toEqual([{ group: 'openai/gpt-4o', inputTokens: 2000, outputTokens: 1000, requests: 1, toolCalls: 0, estimatedCostUsd: 0.015 }]);
    await testRt.store.usage.add(t.scope, { day, keyId: t.keyId, subject: 'agent:agt_x', model: 'anthropic/unpriced' }, { inputTokens: 10, outputTokens: 10, requests: 1, toolCalls: 0 });
    const mixed = await call(app, 'GET', '/v1/usage?groupBy=agent', { key: t.apiKey });
    expect(mixed.body.data.rows[0].estimatedCostUsd).toBeNull();
  });

  it('serves the same report to the tenant’s platform token, and names a bad parameter', async () => {
    const tenant = await provision(app, platformTestSecrets().adminToken);
    const agent = (await call(app, 'POST', '/v1/agents', { key: tenant.apiKey, body: { name: 'A', model: 'gpt-4' } })).body.data.id as string;
    await call(app, 'POST', `/v1/agents/${agent}/converse`, { key: tenant.apiKey, body: { message: 'Hello there' } });
    const viaKey = await call(app, 'GET', '/v1/usage?groupBy=agent', { key: tenant.apiKey });
    const viaToken = await pcall(app, 'GET', '/platform/usage?groupBy=agent', tenant.accessToken);
    expect(viaToken.status).toBe(200);
    expect(viaToken.body.data).toEqual(viaKey.body.data);
    for (const [query, field] of [['from=2026-13-01', 'from'], ['from=2026-02-30', 'from'], ['from=2026-05-02&to=2026-05-01', 'to'], ['from=2024-01-01&to=2026-01-01', 'to'], ['groupBy=hour', 'groupBy']]) {
      const bad = await call(app, 'GET', `/v1/usage?${query}`, { key: tenant.apiKey });
      expect(bad.status, query).toBe(400);
      expect(bad.body.error.details.field, query).toBe(field);
    }
  });
});
