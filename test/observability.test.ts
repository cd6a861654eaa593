import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Logs and metrics as a Lambda writes them (Powertools' JSON lines; CloudWatch EMF documents),
 * read off this process's stdout while the local app serves real requests: every line a request
 * writes carries its request id and tenant, concurrent requests each their own, and the metrics
 * count requests by route, model calls and tokens by model, tool calls by kind and queued messages.
 * The environment is set before anything reads it, as Lambda's is.
 */
process.env.LOG_LEVEL = 'info';
process.env.METRICS = 'emf';
process.env.METRICS_NAMESPACE = 'CairnTest';
process.env.POWERTOOLS_SERVICE_NAME = 'agents';

const { createLocalApp } = await import('../local/local-app');
const { call } = await import('./helpers/http');
const { testLocal, testRt } = await import('./helpers/runtime');
const { newTenant } = await import('./helpers/tenant');

type Line = Record<string, unknown> & { _aws?: { CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string; Unit: string }> }> } };
const written: Line[] = [];
const realWrite = process.stdout.write.bind(process.stdout);

beforeAll(() => {
  // Lines this test reads are kept, not printed: the test run's output stays the reporter's.
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const others: string[] = [];
    for (const text of String(chunk).split('\n')) {
      try {
        if (text.startsWith('{')) {
          written.push(JSON.parse(text) as Line);
          continue;
        }
      } catch {
        // not one of ours
      }
      others.push(text);
    }
    const unread = others.join('\n');
    return unread.trim() === '' ? true : (realWrite as (...args: unknown[]) => boolean)(unread, ...rest);
  });
});
afterAll(() => {
  process.stdout.write = realWrite;
});

const app = createLocalApp(testRt);
const logs = () => written.filter((l) => !l._aws);
const metrics = (dimension: string) => written.filter((l) => l._aws?.CloudWatchMetrics[0]!.Dimensions.some((set) => set.includes(dimension)));

describe('logs and metrics', () => {
  it('puts each request’s id and tenant on every line it writes, concurrent requests each their own', async () => {
    const tenants = await Promise.all([newTenant(), newTenant()]);
    const agents = await Promise.all(tenants.map(async (t) => (await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'A', model: 'gpt-4' } })).body.data.id as string));
    const turns = await Promise.all(tenants.map((t, i) => call(app, 'POST', `/v1/agents/${agents[i]}/converse`, { key: t.apiKey, body: { message: 'Hello there' } })));
    tenants.forEach((t, i) => {
      const requestId = turns[i]!.headers.get('x-request-id')!;
      const lines = logs().filter((l) => l.requestId === requestId);
      expect(lines.length).toBeGreaterThanOrEqual(1);
      for (const line of lines) expect(line).toMatchObject({ tenantId: t.scope.tenantId, service: 'agents' });
      expect(lines.find((l) => l.message === 'request')).toMatchObject({ level: 'INFO', timestamp: expect.any(String), keyId: t.keyId, method: 'POST', status: 200, durationMs: expect.any(Number), dynamoRequests: expect.any(Number) });
    });
  });

  it('counts requests by route, model calls and tokens by model, and tool calls by kind', async () => {
    const t = await newTenant();
    const agent = (
      await call(app, 'POST', '/v1/agents', {
        key: t.apiKey,
        // A tool whose server is not there: the call is made and fails.
        body: { name: 'Shop', model: 'gpt-4', tools: [{ type: 'http', name: 'order_status', description: 'Looks up the status of an order by its number', parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] }, url: 'http://localhost:9/orders/{{orderId}}' }] },
      })
    ).body.data;
    const before = written.length;
    const turn = await call(app, 'POST', `/v1/agents/${agent.id}/converse`, { key: t.apiKey, body: { message: 'Where is my order A17?' } });
    expect(turn.status).toBe(200);
    const mine = written.slice(before);
    const request = mine.find((l) => l.route === 'POST /v1/agents/:agentId/converse')!;
    expect(request._aws!.CloudWatchMetrics[0]).toMatchObject({ Namespace: 'CairnTest', Dimensions: [['service', 'route']] });
    expect(request).toMatchObject({ service: 'agents', Requests: 1, ClientErrors: 0, ServerErrors: 0, Latency: expect.any(Number) });

    const models = mine.filter((l) => l.model === turn.body.data.model);
    expect(models).toHaveLength(2); // the call that chose the tool, the one that answered
    expect(models.reduce((n, l) => n + (l.InputTokens as number), 0)).toBe(turn.body.data.usage.inputTokens);
    expect(models.reduce((n, l) => n + (l.OutputTokens as number), 0)).toBe(turn.body.data.usage.outputTokens);
    const totals = mine.filter((l) => l._aws && l.Tokens !== undefined);
    expect(totals.every((l) => l._aws!.CloudWatchMetrics[0]!.Dimensions[0]!.join() === 'service')).toBe(true);
    expect(totals.reduce((n, l) => n + (l.Tokens as number), 0)).toBe(turn.body.data.usage.inputTokens + turn.body.data.usage.outputTokens);

    expect(mine.find((l) => l.toolKind === 'http')).toMatchObject({ ToolCalls: 1, ToolErrors: 1, ToolLatency: expect.any(Number) });

    const missing = await call(app, 'GET', '/v1/agents/agt_nothing', { key: t.apiKey });
    expect(missing.status).toBe(404);
    expect(metrics('route').at(-1)).toMatchObject({ route: 'GET /v1/agents/:agentId', ClientErrors: 1, ServerErrors: 0 });
  });

  it('counts queued messages and puts their tenant on the lines their work writes', async () => {
    const t = await newTenant();
    const before = written.length;
    const ks = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'kb', type: 'file-collection', files: [{ path: 'a.md', content: '# A\n\nSome text.' }] } });
    await call(app, 'POST', `/v1/knowledge-sources/${ks.body.data.id}/connect`, { key: t.apiKey, body: {} });
    await testLocal.ingestion!.drain();
    const mine = written.slice(before);
    const messages = mine.filter((l) => l._aws && l.Messages !== undefined);
    expect(messages.length).toBeGreaterThanOrEqual(2); // the sync and its batch
    for (const m of messages) expect(m).toMatchObject({ Messages: 1, MessageFailures: 0 });
    const ready = mine.find((l) => l.message === 'knowledge source ready')!;
    expect(ready).toMatchObject({ tenantId: t.scope.tenantId, messageId: expect.any(String) });
  });

  it('records a token hook’s path with its token redacted, in the request’s log line and its trace', async () => {
    const t = await newTenant();
    const wf = await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body: { name: 'hooked', steps: [{ id: 'echo', type: 'transform', expression: 'input' }] } });
    const made = await call(app, 'POST', `/v1/workflows/${wf.body.data.id}/hooks`, { key: t.apiKey, body: { name: 'shop' } });
    const secret = made.body.data.secret as string;
    expect(secret).toMatch(/^chs_/);
    const res = await call(app, 'POST', made.body.data.url as string, { body: { input: 'new order' } });
    expect(res.status).toBe(202);
    const requestId = res.headers.get('x-request-id')!;
    const line = logs().find((l) => l.requestId === requestId && l.message === 'request')!;
    expect(line.path).toBe(`/v1/hooks/${made.body.data.id}/chs_[redacted]`);
    const traced = await call(app, 'GET', `/v1/traces/${requestId}`, { key: t.apiKey });
    expect(traced.status).toBe(200);
    const wrong = await call(app, 'POST', `/v1/hooks/${made.body.data.id}/chs_not-the-token`, { body: {} });
    expect(wrong.status).toBe(401);
    for (const recorded of [JSON.stringify(traced.body), JSON.stringify(logs()), JSON.stringify(wrong.body)]) {
      expect(recorded).not.toContain(secret);
      expect(recorded).not.toContain('chs_not-the-token');
    }
  });
});
