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
    for (const [what, res] of [['execute', executed], ['agent', agent], ['hook', called]] as const) {
      expect(res.status, what).toBe(413);
      expect(res.body.error.code, what).toBe('PAYLOAD_TOO_LARGE');
    }
  });

  it('answers 400 for a file path under 1,024 characters but over 1,024 bytes', async () => {
    const res = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'kb', type: 'file-collection', files: [{ path: `${'Ω'.repeat(600)}.md`, content: '# Omega' }] } });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe('files[0].path');
  });

  it('answers a hook body nested as deep as the JSON guard allows with a 2xx or a 400, never a 500', async () => {
    const wf = await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body: { name: 'deep', steps: [{ id: 'echo', type: 'transform', expression: '1' }] } });
    const hook = await call(app, 'POST', `/v1/workflows/${wf.body.data.id}/hooks`, { key: t.apiKey, body: { name: 'h' } });
    for (const depth of [30, 31, 32, 33]) {
      const body = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
      const res = await call(app, 'POST', hook.body.data.url as string, { rawBody: body, headers: { 'content-type': 'application/json' } });
      expect(res.status, `depth ${depth}`).toBeLessThan(500);
      if (res.status >= 400) expect(res.body.error.code, `depth ${depth}`).toBe('INVALID_REQUEST');
    }
  });
});
