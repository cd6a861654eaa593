import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { openaiProvider } from '../shared/models/openai-provider';
import type { Runtime } from '../shared/runtime';
import { call } from './helpers/http';
import { fixedJsonServer } from './helpers/json-server';
import { pcall, platformTestSecrets, provision } from './helpers/platform';
import { testLocal, testRt } from './helpers/runtime';
import { newTenant } from './helpers/tenant';

/**
 * Usage accounting through the API: what turns, workflow steps, searches and ingestion used, counted
 * atomically per day × key × agent/workflow/knowledge source × model, reported grouped with
 * estimated cost.
 */
const app = createLocalApp(testRt);
const otherInstance = createLocalApp(testRt);
const today = () => new Date().toISOString().slice(0, 10);

const shop = fixedJsonServer({ status: 'shipped' });
/** Counts a turn without search, ingestion or workflow work leaves at zero. */
const NO_OTHER_WORK = { cachedInputTokens: 0, cacheWriteTokens: 0, failedRequests: 0, searches: 0, readUnits: 0, writeUnits: 0, bytesIngested: 0, steps: 0, feedbackUp: 0, feedbackDown: 0, guardrailFindings: 0, codeMs: 0 };
/** The counts of a grounded turn's searches: one per turn, read units as DynamoDB reported them. */
const searched = (n: number) => ({ ...NO_OTHER_WORK, searches: n, readUnits: expect.any(Number) });

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
        { group: second.keyId, ...sum(secondKeyTurns), requests: 4, toolCalls: 0, ...searched(4), estimatedCostUsd: 0 },
        { group: t.keyId, ...sum(turns.filter((_, i) => i % 3 !== 0)), requests: 8, toolCalls: 0, ...searched(8), estimatedCostUsd: 0 },
      ]),
    );
    const byAgent = await call(app, 'GET', '/v1/usage?groupBy=agent', { key: t.apiKey });
    expect(byAgent.body.data.rows).toEqual([{ group: agent, ...sum(turns), requests: 12, toolCalls: 0, ...searched(12), estimatedCostUsd: 0 }]);
    expect(byAgent.body.data.rows[0].readUnits).toBeGreaterThan(0);
    const byModel = await call(app, 'GET', '/v1/usage?groupBy=model', { key: t.apiKey });
    // The turns' model, and `-` for the ingestion no model did.
    expect(byModel.body.data.rows.map((r: { group: string; inputTokens: number }) => [r.group, r.inputTokens > 0])).toEqual([['-', false], [turns[0]!.body.data.model, true]]);
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
    expect(turn).toMatchObject({ group: agent, inputTokens: resumed.body.data.usage.inputTokens, outputTokens: resumed.body.data.usage.outputTokens, requests: 2, toolCalls: 1, searches: 0 });

    const wf = (await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body: { name: 'echo', steps: [{ type: 'generation', config: { model: 'gpt-4', prompt: 'Repeat: {{user_message}}' } }] } })).body.data.id as string;
    const ran = await call(app, 'POST', `/v1/workflows/${wf}/execute`, { key: t.apiKey, body: { input: 'hello there', mode: 'sync' } });
    expect(ran.body.data.status).toBe('succeeded');
    expect(ran.body.data).not.toHaveProperty('keyId');
    const byWorkflow = (await call(app, 'GET', '/v1/usage?groupBy=workflow', { key: t.apiKey })).body.data.rows;
    expect(byWorkflow).toEqual([{ group: wf, ...ran.body.data.usage, requests: 1, toolCalls: 0, ...NO_OTHER_WORK, steps: 1, estimatedCostUsd: 0 }]);
  });

  it('counts ingestion under its source, searches under whoever asked, and every workflow step', async () => {
    const { t, second, agent } = await setUp();
    const ks = (await call(app, 'GET', `/v1/agents/${agent}`, { key: t.apiKey })).body.data.knowledgeSourceIds[0] as string;
    const ingested = (await call(app, 'GET', '/v1/usage?groupBy=knowledgeSource', { key: t.apiKey })).body.data.rows;
    expect(ingested).toEqual([{ group: ks, ...NO_OTHER_WORK, inputTokens: 0, outputTokens: 0, requests: 0, toolCalls: 0, bytesIngested: expect.any(Number), writeUnits: expect.any(Number), estimatedCostUsd: 0 }]);
    // The document's text, without markup (its heading became its title).
    expect(ingested[0].bytesIngested).toBe(Buffer.byteLength('Items can be returned within 30 days of delivery.'));
    expect(ingested[0].writeUnits).toBeGreaterThan(0);

    for (const key of [t.apiKey, second.apiKey, second.apiKey]) {
      expect((await call(otherInstance, 'POST', `/v1/knowledge-sources/${ks}/search`, { key, body: { query: 'return items' } })).status).toBe(200);
    }
    const wf = (
      await call(app, 'POST', '/v1/workflows', {
        key: second.apiKey,
        body: { name: 'look up', steps: [{ id: 'find', type: 'search', config: { knowledgeSourceId: ks, query: '{{user_message}}' } }, { id: 'say', type: 'generation', config: { model: 'gpt-4', prompt: 'Answer from {{steps.find.output}}' } }] },
      })
    ).body.data.id as string;
    expect((await call(app, 'POST', `/v1/workflows/${wf}/execute`, { key: second.apiKey, body: { input: 'return window', mode: 'sync' } })).body.data.status).toBe('succeeded');

    const bySource = (await call(app, 'GET', '/v1/usage?groupBy=knowledgeSource', { key: t.apiKey })).body.data.rows;
    expect(bySource).toEqual([expect.objectContaining({ group: ks, searches: 3 })]);
    expect(bySource[0].readUnits).toBeGreaterThan(0);
    const byWorkflow = (await call(app, 'GET', '/v1/usage?groupBy=workflow', { key: t.apiKey })).body.data.rows;
    expect(byWorkflow).toEqual([expect.objectContaining({ group: wf, steps: 2, searches: 1, requests: 1 })]);
    const byKey = (await call(app, 'GET', '/v1/usage?groupBy=key', { key: t.apiKey })).body.data.rows;
    // The second key: two searches through the API and the workflow's one; ingestion has no key.
    expect(byKey).toEqual(expect.arrayContaining([expect.objectContaining({ group: second.keyId, searches: 3, steps: 2 }), expect.objectContaining({ group: t.keyId, searches: 1 }), expect.objectContaining({ group: '-', bytesIngested: ingested[0].bytesIngested })]));
  });

  it('adds up exactly the tokens a provider reports, over concurrent turns on two instances, priced from MODEL_PRICES', async () => {
    // An OpenAI-compatible provider on the wire, reporting different usage for every request.
    const reported = { input: 0, output: 0, calls: 0 };
    const provider = createServer((req, res) => {
      req.resume().on('end', () => {
        const usage = { prompt_tokens: 20 + Math.floor(Math.random() * 500), completion_tokens: 1 + Math.floor(Math.random() * 200) };
        reported.input += usage.prompt_tokens;
        reported.output += usage.completion_tokens;
        reported.calls++;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'c', object: 'chat.completion', model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: 'Noted.' }, finish_reason: 'stop' }], usage }));
      });
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    try {
      const engine = openaiProvider({ baseUrl: `http://127.0.0.1:${(provider.address() as { port: number }).port}/v1`, apiKey: 'sk-test' });
      const rt: Runtime = { ...testRt, models: { resolve: async (name) => ({ name: `openai/${name}`, model: name, engine }) } };
      const [one, two] = [createLocalApp(rt), createLocalApp(rt)];
      const t = await newTenant('unlimited');
      const agent = (await call(one, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Paid', model: 'gpt-4o' } })).body.data.id as string;
      const turns = await Promise.all(Array.from({ length: 16 }, (_, i) => call(i % 2 ? two : one, 'POST', `/v1/agents/${agent}/converse`, { key: t.apiKey, body: { message: `Question ${i}` } })));
      for (const turn of turns) expect(turn.status).toBe(200);
      // Each turn's answer, one call each: memory is the built-in rules' unless the agent chooses a model.
      expect(reported.calls).toBe(16);
      const { totals } = (await call(two, 'GET', '/v1/usage?groupBy=model', { key: t.apiKey })).body.data;
      expect(totals).toMatchObject({ inputTokens: reported.input, outputTokens: reported.output, requests: 16 });
      // The API rounds costs to micro-dollars, so the exact price may differ from it by half of one.
      const price = (reported.input / 1000) * 0.0025 + (reported.output / 1000) * 0.01;
      expect(Math.abs(totals.estimatedCostUsd - price)).toBeLessThanOrEqual(0.6e-6);
    } finally {
      await new Promise<void>((resolve) => provider.close(() => resolve()));
    }
  });

  it('estimates cost from MODEL_PRICES, and says so when a model has no price', async () => {
    const t = await newTenant();
    const day = today();
    await testRt.store.usage.add(t.scope, { day, keyId: t.keyId, subject: 'agent:agt_x', model: 'openai/gpt-4o' }, { inputTokens: 2000, outputTokens: 1000, requests: 1, toolCalls: 0 });
    const priced = await call(app, 'GET', '/v1/usage?groupBy=model', { key: t.apiKey });
    expect(priced.body.data.rows).toEqual([{ group: 'openai/gpt-4o', inputTokens: 2000, outputTokens: 1000, requests: 1, toolCalls: 0, ...NO_OTHER_WORK, estimatedCostUsd: 0.015 }]);
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
