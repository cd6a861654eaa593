import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/**
 * Evaluation datasets through the API: made with cases or empty, added to in JSON and JSON Lines
 * (OpenAI Evals lines too), read back in order a page at a time, refused whole when a line is bad,
 * bounded, tenant-scoped, deleted with their cases.
 */
const app = createLocalApp(testRt);

describe('evaluation datasets', () => {
  let t: TestTenant;
  const api = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => call(app, method, path, { key: t.apiKey, ...(body === undefined ? {} : { body }), ...(headers ? { headers } : {}) });
  const lines = (path: string, text: string) => call(app, 'POST', path, { key: t.apiKey, rawBody: text, headers: { 'content-type': 'application/x-ndjson' } });

  beforeAll(async () => {
    t = await newTenant();
  });

  it('makes a dataset with its cases, adds more in JSON and JSON Lines, and reads them back in order', async () => {
    const made = await api('POST', '/v1/eval-datasets', {
      name: 'Returns',
      cases: [
        { input: 'How long do I have to return an item?', expected: { answer: ['30 days', 'thirty days'], sources: ['returns.md'] }, metadata: { tag: 'policy' } },
        { input: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Can I return a gift?' }], expected: { contains: ['receipt'] } },
      ],
    });
    expect(made.status).toBe(201);
    const id = made.body.data.id as string;
    expect(id).toMatch(/^eds_/);
    expect(made.headers.get('location')).toBe(`/v1/eval-datasets/${id}`);
    expect(made.body.data).toMatchObject({ name: 'Returns', description: '', caseCount: 2 });

    const json = await api('POST', `/v1/eval-datasets/${id}/cases`, { cases: [{ input: 'Do you refund shipping?', expected: { refuses: true } }] });
    expect(json.status).toBe(200);
    expect(json.body.data).toMatchObject({ added: 1, dataset: { caseCount: 3 } });
    // JSON Lines: a blank line is skipped; an OpenAI Evals line's ideal is the expected answer.
    const jl = await lines(`/v1/eval-datasets/${id}/cases`, ['{"input": "Where is my order?", "expected": {"toolCalls": [{"name": "order_status", "arguments": {"orderId": "A17"}}]}}', '', '{"input": [{"role": "user", "content": "Capital of France?"}], "ideal": ["Paris", "paris, france"]}'].join('\n'));
    expect(jl.status).toBe(200);
    expect(jl.body.data.added).toBe(2);

    const first = await api('GET', `/v1/eval-datasets/${id}/cases?limit=3`);
    expect(first.body.data.map((c: { position: number }) => c.position)).toEqual([1, 2, 3]);
    expect(first.body.data[0]).toMatchObject({ input: 'How long do I have to return an item?', expected: { answer: ['30 days', 'thirty days'] }, metadata: { tag: 'policy' } });
    expect(first.body.data[0].id).toMatch(/^evc_/);
    const rest = await api('GET', `/v1/eval-datasets/${id}/cases?limit=3&cursor=${encodeURIComponent(first.body.meta.pagination.nextCursor)}`);
    expect(rest.body.data.map((c: { position: number }) => c.position)).toEqual([4, 5]);
    expect(rest.body.data[1]).toMatchObject({ input: [{ role: 'user', content: 'Capital of France?' }], expected: { answer: ['Paris', 'paris, france'] } });
    expect(rest.body.meta.pagination.hasMore).toBe(false);
    expect((await api('GET', `/v1/eval-datasets/${id}`)).body.data.caseCount).toBe(5);
    expect((await api('GET', '/v1/eval-datasets')).body.data.map((d: { id: string }) => d.id)).toContain(id);
  });

  it('refuses a bad case or line with a 400 naming it, and adds nothing', async () => {
    const id = (await api('POST', '/v1/eval-datasets', { name: 'Strict' })).body.data.id as string;
    const cases: Array<[unknown, string]> = [
      [{ cases: [{ input: 'fine' }, { input: '' }] }, 'cases[1].input'],
      [{ cases: [{ input: 'x', expected: { regex: '(' } }] }, 'cases[0].expected.regex'],
      [{ cases: [{ input: 'x', expected: { schema: { type: 'nonsense' } } }] }, 'cases[0].expected.schema'],
      [{ cases: [{ input: [{ role: 'system', content: 'no question' }] }] }, 'cases[0].input'],
      [{ cases: [{ input: 'x', expected: { colour: 'red' } }] }, 'cases[0].expected.colour'],
    ];
    for (const [body, field] of cases) {
      const res = await api('POST', `/v1/eval-datasets/${id}/cases`, body);
      expect([res.status, res.body.error?.details?.field]).toEqual([400, field]);
    }
    const notJson = await lines(`/v1/eval-datasets/${id}/cases`, '{"input": "one"}\n{"input": "two"\n{"input": "three"}');
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.details).toMatchObject({ field: 'line 2', line: 2 });
    const notCase = await lines(`/v1/eval-datasets/${id}/cases`, '{"input": "one"}\n{"question": "two"}');
    expect(notCase.body.error.details.field).toMatch(/^line 2/);
    expect((await lines(`/v1/eval-datasets/${id}/cases`, '\n\n')).body.error.details.field).toBe('body');
    // JSON Lines elsewhere is not JSON.
    expect((await call(app, 'POST', '/v1/agents', { key: t.apiKey, rawBody: '{"name": "x"}', headers: { 'content-type': 'application/x-ndjson' } })).status).toBe(415);
    const after = await api('GET', `/v1/eval-datasets/${id}`);
    expect(after.body.data.caseCount).toBe(0);
    expect((await api('GET', `/v1/eval-datasets/${id}/cases`)).body.data).toEqual([]);
  });

  it('holds at most 10,000 cases: an append past it is a 409 that adds nothing', async () => {
    const many = Array.from({ length: 5000 }, (_, i) => `{"input":"q${i}"}`).join('\n');
    const id = (await api('POST', '/v1/eval-datasets', { name: 'Big' })).body.data.id as string;
    expect((await lines(`/v1/eval-datasets/${id}/cases`, many)).status).toBe(200);
    expect((await lines(`/v1/eval-datasets/${id}/cases`, many)).status).toBe(200);
    const over = await api('POST', `/v1/eval-datasets/${id}/cases`, { cases: [{ input: 'one too many' }] });
    expect(over.status).toBe(409);
    expect(over.body.error.details).toMatchObject({ limit: 10000, caseCount: 10000 });
    expect((await api('GET', `/v1/eval-datasets/${id}`)).body.data.caseCount).toBe(10000);
  });

  it('keeps datasets to their tenant, and deletes one with its cases', async () => {
    const id = (await api('POST', '/v1/eval-datasets', { name: 'Mine', cases: [{ input: 'q' }] })).body.data.id as string;
    const other = await newTenant();
    expect((await call(app, 'GET', `/v1/eval-datasets/${id}`, { key: other.apiKey })).status).toBe(404);
    expect((await call(app, 'GET', `/v1/eval-datasets/${id}/cases`, { key: other.apiKey })).status).toBe(404);
    expect((await call(app, 'POST', `/v1/eval-datasets/${id}/cases`, { key: other.apiKey, body: { cases: [{ input: 'x' }] } })).status).toBe(404);
    expect((await api('DELETE', `/v1/eval-datasets/${id}`)).body.data).toEqual({ id, deleted: true });
    expect((await api('GET', `/v1/eval-datasets/${id}`)).status).toBe(404);
    expect(await testRt.store.evalCases.allCases(t.scope, id)).toEqual([]);
  });
});
