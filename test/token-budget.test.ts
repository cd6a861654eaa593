import { describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import type { ChatModel, ModelResolver } from '../shared/models/types';
import { call } from './helpers/http';
import { pcall, platformTestSecrets, provision } from './helpers/platform';
import { testRt } from './helpers/runtime';
import { newTenant } from './helpers/tenant';

/**
 * Token budgets against DynamoDB Local: calls of a model that costs tokens reserve their worst case
 * first, so calls admitted together never pass the budget, and give back what they did not use.
 */
function gatedModel() {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const state = { entered: 0, release };
  const engine: ChatModel = {
    provider: 'paid',
    supportsTools: true,
    async generate() {
      state.entered++;
      await gate;
      return { text: 'Done.', usage: { inputTokens: 10, outputTokens: 2 }, finishReason: 'stop' };
    },
    async *stream(request, signal) {
      const result = await engine.generate(request, signal);
      yield result.text;
      return result;
    },
  };
  const models: ModelResolver = { resolve: async (name) => (name.startsWith('local/') ? testRt.models.resolve(name) : { name: `paid/${name}`, model: name, engine }) };
  return { models, state };
}

describe('token budgets', () => {
  it('admits exactly the calls whose worst case fits, across concurrent requests, and gives back what they did not use', async () => {
    const { models, state } = gatedModel();
    const app = createLocalApp({ ...testRt, models });
    const tenant = await provision(app, platformTestSecrets().adminToken);
    const agent = (await call(app, 'POST', '/v1/agents', { key: tenant.apiKey, body: { name: 'Paid', model: 'gpt-4', maxTokens: 100 } })).body.data.id as string;
    // A call's worst case is its prompt (~3 tokens here) and maxTokens (100): three fit in 350, four do not.
    const set = await pcall(app, 'PUT', '/platform/usage/budget', tenant.accessToken, { body: { monthlyTokens: 350 } });
    expect(set.body.data).toMatchObject({ plan: 200_000_000, own: 350, effective: 350, used: 0 });

    let denied = 0;
    const turns = Array.from({ length: 10 }, () =>
      call(app, 'POST', `/v1/agents/${agent}/converse`, { key: tenant.apiKey, body: { message: 'Hello' } }).then((res) => {
        if (res.status === 429) denied++;
        return res;
      }),
    );
    // The admitted calls hold their reservations until every request has been decided.
    for (let waited = 0; state.entered + denied < 10 && waited < 20_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
    state.release();
    const answers = await Promise.all(turns);
    const admitted = answers.filter((a) => a.status === 200);
    expect(admitted).toHaveLength(3);
    // Model-backed answers say where the budget stands (as of their own turn).
    for (const a of admitted) {
      expect(a.headers.get('x-usage-tokens-limit')).toBe('350');
      expect(Number(a.headers.get('x-usage-tokens-remaining'))).toBeLessThanOrEqual(350 - 12);
      expect(Number(a.headers.get('x-usage-tokens-reset'))).toBeGreaterThan(0);
    }
    const refused = answers.filter((a) => a.status === 429);
    expect(refused).toHaveLength(7);
    expect(refused[0]!.body.error).toMatchObject({ code: 'QUOTA_EXCEEDED', details: { budget: 350 } });
    expect(Number(refused[0]!.headers.get('retry-after'))).toBeGreaterThan(0);

    // Settled: what the three used (12 tokens each), not what they reserved.
    expect((await pcall(app, 'GET', '/platform/usage/budget', tenant.accessToken)).body.data.used).toBe(36);
    expect((await call(app, 'POST', `/v1/agents/${agent}/converse`, { key: tenant.apiKey, body: { message: 'Hello' } })).status).toBe(200);

    // A budget already spent is a 429 before any model call (and before a stream would open).
    await pcall(app, 'PUT', '/platform/usage/budget', tenant.accessToken, { body: { monthlyTokens: 40 } });
    const entered = state.entered;
    const spent = await call(app, 'POST', `/v1/agents/${agent}/converse`, { key: tenant.apiKey, body: { message: 'Hello', stream: true } });
    expect(spent.status).toBe(429);
    expect(state.entered).toBe(entered);
    // The built-in engine costs nothing and is never refused.
    const free = (await call(app, 'POST', '/v1/agents', { key: tenant.apiKey, body: { name: 'Free', model: 'local/extractive' } })).body.data.id as string;
    const freeTurn = await call(app, 'POST', `/v1/agents/${free}/converse`, { key: tenant.apiKey, body: { message: 'Hello' } });
    expect(freeTurn.status).toBe(200);
    expect(freeTurn.headers.get('x-usage-tokens-limit')).toBeNull();
    // Removing the tenant's own limit leaves the plan's.
    expect((await pcall(app, 'PUT', '/platform/usage/budget', tenant.accessToken, { body: { monthlyTokens: null } })).body.data).toMatchObject({ plan: 200_000_000, effective: 200_000_000 });
  });
});

/** A priced model (openai/gpt-4o: 0.0025 in, 0.01 out per 1,000 tokens) whose every call uses 1,000 + 100 tokens: 0.0035 USD. */
function pricedModels(): { models: ModelResolver; calls: () => number } {
  let calls = 0;
  const engine: ChatModel = {
    provider: 'openai',
    supportsTools: true,
    async generate() {
      calls++;
      return { text: 'Done.', usage: { inputTokens: 1000, outputTokens: 100 }, finishReason: 'stop' };
    },
    async *stream(request, signal) {
      const result = await engine.generate(request, signal);
      yield result.text;
      return result;
    },
  };
  return { models: { resolve: async (name) => (name.startsWith('local/') ? testRt.models.resolve(name) : { name: 'openai/gpt-4o', model: 'gpt-4o', engine }) }, calls: () => calls };
}

describe('budgets in US dollars', () => {
  it('hold a tenant to its monthly USD limit at MODEL_PRICES, and each API key to its own', async () => {
    const { models, calls } = pricedModels();
    const app = createLocalApp({ ...testRt, models });
    const t = await newTenant();
    const token = (await call(app, 'POST', `/platform/tenants/${t.scope.tenantId}/tokens`, { headers: { authorization: `Bearer ${platformTestSecrets().adminToken}` }, body: {} })).body.data.accessToken as string;
    const agent = (await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Priced', model: 'openai/gpt-4o', maxTokens: 100 } })).body.data.id as string;
    const ask = (key: string) => call(app, 'POST', `/v1/agents/${agent}/converse`, { key, body: { message: 'Hello' } });

    // The tenant: 0.01 USD a month. Each call reserves its worst case and settles at 0.0035: the fourth finds it spent.
    expect((await pcall(app, 'PUT', '/platform/usage/budget', token, { body: { monthlyUsd: 0.01 } })).body.data).toMatchObject({ monthlyUsd: 0.01, usedUsd: 0 });
    for (let i = 0; i < 3; i++) expect((await ask(t.apiKey)).status).toBe(200);
    expect((await pcall(app, 'GET', '/platform/usage/budget', token)).body.data.usedUsd).toBeCloseTo(0.0105, 9);
    const made = calls();
    const refused = await ask(t.apiKey);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'QUOTA_EXCEEDED', details: { unit: 'usd', budget: 0.01 } });
    expect(calls()).toBe(made);
    // The usage report agrees with what the budget counted.
    expect((await call(app, 'GET', '/v1/usage?groupBy=model', { key: t.apiKey })).body.data.totals.estimatedCostUsd).toBeCloseTo(0.0105, 9);
    expect((await pcall(app, 'PUT', '/platform/usage/budget', token, { body: { monthlyUsd: null } })).body.data).not.toHaveProperty('monthlyUsd');

    // A key of its own: 0.004 USD holds one call of that key; the tenant's other key goes on.
    const other = await testRt.store.apiKeys.createApiKey(t.scope, { plan: 'enterprise' });
    const set = await pcall(app, 'PUT', `/platform/usage/budget/keys/${t.keyId}`, token, { body: { monthlyUsd: 0.004 } });
    expect(set.body.data).toMatchObject({ keyId: t.keyId, monthlyUsd: 0.004, usedUsd: 0 });
    expect((await ask(t.apiKey)).status).toBe(200);
    const overKey = await ask(t.apiKey);
    expect(overKey.status).toBe(429);
    expect(overKey.body.error.details).toMatchObject({ unit: 'usd', keyId: t.keyId });
    expect((await ask(other.apiKey)).status).toBe(200);
    expect((await pcall(app, 'GET', `/platform/usage/budget/keys/${t.keyId}`, token)).body.data).toMatchObject({ usedUsd: 0.0035, usedTokens: 0 }); // tokens are counted only under a token limit
    // Someone else's key, or none: 404; a body with nothing to set: 400 naming why.
    expect((await pcall(app, 'GET', '/platform/usage/budget/keys/key_nope', token)).status).toBe(404);
    const empty = await pcall(app, 'PUT', `/platform/usage/budget/keys/${t.keyId}`, token, { body: {} });
    expect(empty.status).toBe(400);
  });
});
