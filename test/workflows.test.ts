import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { newTenant, type TestTenant } from './helpers/tenant';
import { testRt } from './helpers/runtime';

const app = createLocalApp(testRt);

describe('workflows', () => {
  let t: TestTenant;
  let ks: string;
  beforeAll(async () => {
    t = await newTenant();
    ks = (await call(app, 'POST', '/v1/knowledge-sources', {
      key: t.apiKey,
      body: { name: 'kb', type: 'file-collection', files: [{ path: 'a.md', content: 'A' }] },
    })).body.data.id;
  });

  /** The seed's sample: search fields sit on the step itself. */
  const seed = () => ({
    name: 'Customer support flow',
    description: 'Classify, search, answer',
    steps: [
      { type: 'classification', config: { model: 'gpt-4', categories: ['billing', 'shipping', 'other'] } },
      { type: 'search', knowledgeSourceId: ks, query: '{{user_message}}' },
      { type: 'generation', config: { model: 'gpt-4', prompt: 'Answer: {{input}}' } },
    ],
  });

  it('normalises the seed sample into config and assigns step ids', async () => {
    const res = await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body: seed() });
    expect(res.status).toBe(201);
    expect(res.body.data.id).toMatch(/^wf_/);
    expect(res.body.data.version).toBe(1);
    expect(res.body.data.steps).toEqual([
      { id: 'step1', type: 'classification', config: { model: 'gpt-4', categories: ['billing', 'shipping', 'other'] } },
      { id: 'step2', type: 'search', config: { knowledgeSourceId: ks, query: '{{user_message}}', topK: 5 } },
      { id: 'step3', type: 'generation', config: { model: 'gpt-4', prompt: 'Answer: {{input}}' } },
    ]);
  });

  it('keeps given step ids and numbers the others around them', async () => {
    const body = seed();
    (body.steps[0] as Record<string, unknown>).id = 'step2';
    const res = await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body });
    expect(res.body.data.steps.map((s: { id: string }) => s.id)).toEqual(['step2', 'step3', 'step4']);
  });

  it('accepts categories with descriptions and examples', async () => {
    const res = await call(app, 'POST', '/v1/workflows', {
      key: t.apiKey,
      body: {
        name: 'router',
        steps: [{
          type: 'classification',
          model: 'local/lexical',
          categories: [{ name: 'billing', description: 'invoices', examples: ['refund my card'] }, 'shipping'],
        }],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.steps[0].config.categories[0]).toEqual({ name: 'billing', description: 'invoices', examples: ['refund my card'] });
  });

  it.each([
    ['steps', { steps: [] }],
    ['steps', { steps: Array.from({ length: 51 }, () => ({ type: 'generation', model: 'gpt-4', prompt: 'x' })) }],
    ['steps[0].type', { steps: [{ type: 'teleport' }] }],
    ['steps[0].config.categories', { steps: [{ type: 'classification', model: 'gpt-4', categories: ['only'] }] }],
    ['steps[0].config.categories[1]', { steps: [{ type: 'classification', model: 'gpt-4', categories: ['a', 'A'] }] }],
    ['steps[0].config.fallbackCategory', { steps: [{ type: 'classification', model: 'gpt-4', categories: ['a', 'b'], fallbackCategory: 'c' }] }],
    ['steps[0].config.model', { steps: [{ type: 'generation', prompt: 'x' }] }],
    ['steps[0].config.prompt', { steps: [{ type: 'generation', model: 'gpt-4', prompt: '  ' }] }],
    ['steps[0].config.knowledgeSourceId', { steps: [{ type: 'search', knowledgeSourceId: 'nope', query: 'q' }] }],
    ['steps[0].config.topK', { steps: [{ type: 'search', knowledgeSourceId: 'ks_01m7y62dvspbq7k3p58zfb7w0n', query: 'q', topK: 0 }] }],
    ['steps[0].query', { steps: [{ type: 'search', query: 'a', config: { knowledgeSourceId: 'ks_01m7y62dvspbq7k3p58zfb7w0n', query: 'b' } }] }],
    ['steps[0].config.colour', { steps: [{ type: 'generation', config: { model: 'gpt-4', prompt: 'x', colour: 1 } }] }],
    ['steps[1].id', { steps: [{ id: 'a', type: 'generation', model: 'gpt-4', prompt: 'x' }, { id: 'a', type: 'generation', model: 'gpt-4', prompt: 'y' }] }],
    ['steps[0].id', { steps: [{ id: '1st', type: 'generation', model: 'gpt-4', prompt: 'x' }] }],
  ])('rejects a bad %s', async (field, change) => {
    const res = await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body: { name: 'bad', ...change } });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe(field);
  });

  it('requires search steps to name a knowledge source of the tenant', async () => {
    const missing = 'ks_01m7y62dvspbq7k3p58zfb7w0n';
    const body = seed();
    body.steps[1] = { type: 'search', knowledgeSourceId: missing, query: 'q' };
    const res = await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe('steps[1].config.knowledgeSourceId');
    const other = await newTenant();
    const foreign = await call(app, 'POST', '/v1/workflows', { key: other.apiKey, body: seed() });
    expect(foreign.status).toBe(400);
  });

  it('PUT replaces the definition and bumps the version; DELETE removes it', async () => {
    const created = (await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body: seed() })).body.data;
    const put = await call(app, 'PUT', `/v1/workflows/${created.id}`, {
      key: t.apiKey,
      body: { ...created, name: 'v2', steps: [{ type: 'generation', model: 'gpt-4', prompt: 'Hi {{input}}' }] },
    });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ id: created.id, name: 'v2', version: 2, createdAt: created.createdAt });
    expect(put.body.data.steps).toHaveLength(1);
    const del = await call(app, 'DELETE', `/v1/workflows/${created.id}`, { key: t.apiKey });
    expect(del.body.data).toEqual({ id: created.id, deleted: true });
    expect((await call(app, 'GET', `/v1/workflows/${created.id}`, { key: t.apiKey })).status).toBe(404);
  });

  it('lists with pagination', async () => {
    const own = await newTenant();
    for (let i = 0; i < 3; i++) {
      await call(app, 'POST', '/v1/workflows', {
        key: own.apiKey,
        body: { name: `w${i}`, steps: [{ type: 'generation', model: 'gpt-4', prompt: 'x' }] },
      });
    }
    const first = await call(app, 'GET', '/v1/workflows?limit=2', { key: own.apiKey });
    expect(first.body.data.map((w: { name: string }) => w.name)).toEqual(['w2', 'w1']);
    const second = await call(app, 'GET', `/v1/workflows?limit=2&cursor=${first.body.meta.pagination.nextCursor}`, { key: own.apiKey });
    expect(second.body.data.map((w: { name: string }) => w.name)).toEqual(['w0']);
    expect(second.body.meta.pagination).toEqual({ limit: 2, nextCursor: null, hasMore: false });
  });
});

describe('workflow compilation at create and update time', () => {
  let t: TestTenant;
  let ks: string;
  beforeAll(async () => {
    t = await newTenant();
    ks = (await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'kb', type: 'file-collection' } })).body.data.id;
  });
  const classify = { id: 'route', type: 'classification', model: 'gpt-4', categories: ['billing', 'shipping'] };
  const search = () => ({ id: 'find', type: 'search', knowledgeSourceId: ks, query: '{{user_message}}' });
  const generate = (prompt: string, extra: Record<string, unknown> = {}) => ({ type: 'generation', model: 'gpt-4', prompt, ...extra });

  it('accepts templates that name what exists before the step', async () => {
    const res = await call(app, 'POST', '/v1/workflows', {
      key: t.apiKey,
      body: {
        name: 'ok',
        steps: [classify, search(), generate('[{{category}}] {{context}} {{steps.route.output.category}} {{steps.find.output.results.0.text}} {{parameters.tone}} {{ input }}')],
      },
    });
    expect(res.status).toBe(201);
  });

  it.each([
    ['steps[1].config.prompt', [classify, generate('{{steps.nope.output.text}}')], 'names step nope, which does not exist'],
    ['steps[1].config.prompt', [classify, generate('{{steps.step3.output.text}}'), generate('x')], 'does not run before this step'],
    ['steps[1].config.prompt', [classify, generate('{{steps.route.output.text}}')], "a classification step's output has no text"],
    ['steps[1].config.prompt', [classify, generate('{{context}}')], '{{context}} needs a search step before this one'],
    ['steps[0].config.prompt', [generate('{{category}}')], '{{category}} needs a classification step before this one'],
    ['steps[0].config.prompt', [generate('{{secrets.key}}')], 'is not a known template variable'],
    ['steps[1].dependsOn[0]', [classify, generate('x', { dependsOn: ['ghost'] })], 'names step ghost, which does not exist'],
    ['steps[0].dependsOn', [generate('x', { id: 'a', dependsOn: ['b'] }), generate('y', { id: 'b', dependsOn: ['a'] })], 'is part of a dependency cycle'],
    ['steps[1].when.category', [classify, generate('x', { when: { step: 'route', category: 'returns' } })], 'must be one of: billing, shipping'],
    ['steps[1].when.step', [{ ...search(), knowledgeSourceId: 'ks_01m7y62dvspbq7k3p58zfb7w0n' }, generate('x', { when: { step: 'find', category: 'billing' } })], 'is not a classification step'],
  ])('rejects a bad %s', async (field, steps, reason) => {
    const res = await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body: { name: 'bad', steps } });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe(field);
    expect(res.body.error.details.reason).toContain(reason);
  });

  it('stores branches: two steps depend on one classification and run on different categories', async () => {
    const res = await call(app, 'POST', '/v1/workflows', {
      key: t.apiKey,
      body: {
        name: 'router',
        steps: [
          classify,
          generate('Billing: {{input}}', { id: 'billing', dependsOn: ['route'], when: { step: 'route', category: 'billing' } }),
          generate('Shipping: {{input}}', { id: 'shipping', dependsOn: ['route'], when: { step: 'route', category: 'shipping' } }),
          generate('{{steps.billing.output.text}} {{steps.shipping.output.text}}', { id: 'join', dependsOn: ['billing', 'shipping'] }),
        ],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.steps[1]).toMatchObject({ id: 'billing', dependsOn: ['route'], when: { step: 'route', category: 'billing' } });
    const bad = await call(app, 'PUT', `/v1/workflows/${res.body.data.id}`, { key: t.apiKey, body: { name: 'router', steps: [generate('{{steps.route.output.category}}')] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('steps[0].config.prompt');
  });
});
