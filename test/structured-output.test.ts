import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { openaiProvider } from '../shared/models/openai-provider';
import type { Runtime } from '../shared/runtime';
import { call } from './helpers/http';
import { testLocal, testRt } from './helpers/runtime';
import { parseSse } from './helpers/sse';
import { newTenant, type TestTenant } from './helpers/tenant';

const app = createLocalApp(testRt);
const schema = { type: 'object', properties: { answer: { type: 'string' }, days: { type: 'integer' } }, required: ['answer', 'days'] };

describe('structured output (responseFormat)', () => {
  let t: TestTenant;
  let agentId: string;
  beforeAll(async () => {
    t = await newTenant();
    const ks = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'kb', type: 'file-collection', files: [{ path: 'returns.md', content: '# Returns\n\nItems can be returned within 30 days of delivery.' }] } });
    await call(app, 'POST', `/v1/knowledge-sources/${ks.body.data.id}/connect`, { key: t.apiKey, body: {} });
    await testLocal.ingestion!.drain();
    agentId = (await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Returns', model: 'gpt-4', capabilities: ['chat', 'document-search'], knowledgeSourceIds: [ks.body.data.id] } })).body.data.id;
  });

  it('the built-in engine fills the schema from its answer, and says which required field it cannot fill', async () => {
    const res = await call(app, 'POST', `/v1/agents/${agentId}/converse`, { key: t.apiKey, body: { message: 'How many days do I have to return an item?', responseFormat: { type: 'json_schema', schema } } });
    expect(res.status).toBe(200);
    expect(res.body.data.output).toEqual({ answer: expect.stringContaining('within 30 days'), days: 30 });
    expect(JSON.parse(res.body.data.reply)).toEqual(res.body.data.output);
    const unfillable = { type: 'object', properties: { answer: { type: 'string' }, warehouseCode: { type: 'string' } }, required: ['warehouseCode'] };
    const refused = await call(app, 'POST', `/v1/agents/${agentId}/converse`, { key: t.apiKey, body: { message: 'Which warehouse ships my order?', responseFormat: { type: 'json_schema', schema: unfillable } } });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toMatchObject({ field: 'responseFormat.schema', missing: ['warehouseCode'] });
    const bad = await call(app, 'POST', `/v1/agents/${agentId}/converse`, { key: t.apiKey, body: { message: 'hi', responseFormat: { type: 'json_schema', schema: { type: 'nonsense' } } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('responseFormat.schema');
  });

  it('streams a structured reply whole, checked, as one delta', async () => {
    const res = await app.request(`http://localhost/v1/agents/${agentId}/converse`, {
      method: 'POST',
      headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ message: 'How many days do I have to return an item?', responseFormat: { type: 'json_schema', schema } }),
    });
    const deltas = parseSse(await res.text()).filter((e) => e.event === 'delta');
    expect(deltas).toHaveLength(1);
    expect(JSON.parse((JSON.parse(deltas[0]!.data) as { text: string }).text)).toMatchObject({ days: 30 });
  });

  it('gives a workflow generation step a structured output that later steps read by path', async () => {
    const ks = (await call(app, 'GET', `/v1/agents/${agentId}`, { key: t.apiKey })).body.data.knowledgeSourceIds[0] as string;
    const created = await call(app, 'POST', '/v1/workflows', {
      key: t.apiKey,
      body: {
        name: 'structured',
        steps: [
          { id: 'find', type: 'search', knowledgeSourceId: ks, query: '{{user_message}}' },
          { id: 'extract', type: 'generation', config: { model: 'gpt-4', prompt: '{{user_message}}', responseFormat: { type: 'json_schema', schema } } },
          { id: 'say', type: 'generation', config: { model: 'gpt-4', prompt: 'You have {{steps.extract.output.json.days}} days.' } },
        ],
      },
    });
    expect(created.status).toBe(201);
    const run = await call(app, 'POST', `/v1/workflows/${created.body.data.id}/execute`, { key: t.apiKey, body: { input: 'How many days do I have to return an item?' } });
    expect(run.body.data.status).toBe('succeeded');
    const steps = run.body.data.steps as Array<{ id: string; output: { json?: unknown; text: string } }>;
    expect(steps.find((s) => s.id === 'extract')!.output.json).toEqual({ answer: expect.stringContaining('30 days'), days: 30 });
    const bad = await call(app, 'POST', '/v1/workflows', {
      key: t.apiKey,
      body: { name: 'bad', steps: [{ type: 'generation', config: { model: 'gpt-4', prompt: 'x', responseFormat: { type: 'json_schema', schema: { type: 'nonsense' } } } }] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('steps[0].config.responseFormat.schema');
  });

  describe('with a provider', () => {
    const replies: string[] = [];
    const seen: Array<Record<string, unknown>> = [];
    const provider = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        seen.push(JSON.parse(body) as Record<string, unknown>);
        const content = replies.shift() ?? '';
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 5 } }));
      });
    });
    let rt: Runtime;
    beforeAll(async () => {
      await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
      const engine = openaiProvider({ baseUrl: `http://127.0.0.1:${(provider.address() as { port: number }).port}/v1`, apiKey: 'sk-test' });
      rt = { ...testRt, models: { resolve: async (name) => ({ name: `openai/${name}`, model: name, engine }) } };
    });
    afterAll(async () => {
      await new Promise<void>((resolve) => provider.close(() => resolve()));
    });

    it('asks natively, repairs one invalid reply, and fails with the validation error after a second', async () => {
      replies.push('Sure! Here it is: days=30', '{"answer":"Within 30 days.","days":30}');
      seen.length = 0;
      const ok = await call(createLocalApp(rt), 'POST', `/v1/agents/${agentId}/converse`, { key: t.apiKey, body: { message: 'How long?', responseFormat: { type: 'json_schema', name: 'returns', schema } } });
      expect(ok.status).toBe(200);
      expect(ok.body.data.output).toEqual({ answer: 'Within 30 days.', days: 30 });
      expect(ok.body.data.usage).toEqual({ inputTokens: 20, outputTokens: 10 });
      expect(seen[0]!.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'returns', schema, strict: false } });
      expect(JSON.stringify((seen[1]!.messages as unknown[]).slice(-1))).toContain('That reply is not valid: the reply is not JSON');

      replies.push('{"answer":"x"}', '{"answer":"y","days":"thirty"}');
      const failed = await call(createLocalApp(rt), 'POST', `/v1/agents/${agentId}/converse`, { key: t.apiKey, body: { message: 'How long?', responseFormat: { type: 'json_schema', schema } } });
      expect(failed.status).toBe(502);
      expect(failed.body.error.details).toMatchObject({ model: 'openai/gpt-4', validation: expect.stringContaining('days') });
    });
  });
});
