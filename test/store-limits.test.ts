import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/**
 * Bodies the API takes but DynamoDB would refuse to store (an item over 400 KB, a key over 1,024
 * bytes of UTF-8) answer 413 or 400 with the error body, never a 500.
 */
const app = createLocalApp(testRt);
const big = (bytes: number) => 'x'.repeat(bytes);

describe('what the store cannot hold', () => {
  let t: TestTenant;
  beforeAll(async () => {
    t = await newTenant('unlimited');
  });

  it('answers 413 for a body whose record would pass 400 KB', async () => {
    const wf = await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body: { name: 'echo', steps: [{ id: 'echo', type: 'transform', expression: 'input' }] } });
    const executed = await call(app, 'POST', `/v1/workflows/${wf.body.data.id}/execute`, { key: t.apiKey, body: { parameters: { blob: big(500_000) }, mode: 'async' } });
    const agent = await call(app, 'POST', '/v1/agents', {
      key: t.apiKey,
      body: { name: 'a', model: 'gpt-4', tools: [{ type: 'http', name: 'big', description: 'A tool with a large schema', url: 'https://shop.example/x', parameters: { type: 'object', description: big(450_000) } }] },
    });
    const hook = await call(app, 'POST', `/v1/workflows/${wf.body.data.id}/hooks`, { key: t.apiKey, body: { name: 'h' } });
    const called = await call(app, 'POST', hook.body.data.url as string, { body: { input: big(450_000) } });
    for (const [what, res, field] of [['execute', executed, 'parameters'], ['agent', agent, 'tools'], ['hook', called, 'body']] as const) {
      expect(res.status, what).toBe(413);
      expect(res.body.error.code, what).toBe('PAYLOAD_TOO_LARGE');
      expect(res.body.error.details, what).toMatchObject({ field, limitBytes: 409_600 });
    }
    // Nothing was kept of what was refused.
    const executions = await call(app, 'GET', `/v1/workflows/${wf.body.data.id}/executions`, { key: t.apiKey });
    expect(executions.body.data).toEqual([]);
  });

  it('answers 400 for a file path under 1,024 characters but over 1,024 bytes', async () => {
    const res = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'kb', type: 'file-collection', files: [{ path: `${'Ω'.repeat(600)}.md`, content: '# Omega' }] } });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe('files[0].path');
  });

  it('answers a hook body nested deeper than its execution can store with a 400 naming where, and takes one a level less', async () => {
    const wf = await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body: { name: 'deep', steps: [{ id: 'echo', type: 'transform', expression: '1' }] } });
    const hook = await call(app, 'POST', `/v1/workflows/${wf.body.data.id}/hooks`, { key: t.apiKey, body: { name: 'h' } });
    const send = (depth: number) => call(app, 'POST', hook.body.data.url as string, { rawBody: `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`, headers: { 'content-type': 'application/json' } });
    // The body is stored as the execution's parameters, a level below the record: 31 levels fit.
    expect((await send(31)).status).toBe(202);
    for (const depth of [32, 33]) {
      const res = await send(depth);
      expect(res.status, `depth ${depth}`).toBe(400);
      expect(res.body.error.code, `depth ${depth}`).toBe('INVALID_REQUEST');
      expect(res.body.error.details.field, `depth ${depth}`).toMatch(/^a\.a\.a/);
    }
  });
});
