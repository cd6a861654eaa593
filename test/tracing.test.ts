import { describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { fixedJsonServer } from './helpers/json-server';
import { testLocal, testRt } from './helpers/runtime';
import { newTenant } from './helpers/tenant';

/**
 * Traces in local mode: the spans of one request — API, search, model calls, tool calls — and of the
 * queued work it started, reached by the request's X-Request-Id.
 */
const app = createLocalApp(testRt);
const shop = fixedJsonServer({ order: 'A17', status: 'shipped' });

type Span = { spanId: string; parentSpanId?: string; name: string; status: string; attributes: Record<string, unknown> };

describe('traces', () => {
  it('follows one converse: the request, its search, both model calls and the tool call, as one tree', async () => {
    const t = await newTenant();
    const ks = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'kb', type: 'file-collection', files: [{ path: 'orders.md', content: '# Orders\n\nOrders ship within two days.' }] } });
    await call(app, 'POST', `/v1/knowledge-sources/${ks.body.data.id}/connect`, { key: t.apiKey, body: {} });
    await testLocal.ingestion!.drain();
    const agent = await call(app, 'POST', '/v1/agents', {
      key: t.apiKey,
      body: {
        name: 'Shop',
        model: 'gpt-4',
        capabilities: ['chat', 'document-search'],
        knowledgeSourceIds: [ks.body.data.id],
        tools: [{ type: 'http', name: 'order_status', description: 'Looks up the status of an order by its number', parameters: { type: 'object', properties: { orderId: { type: 'string', pattern: '^[A-Z][0-9]+$' } }, required: ['orderId'] }, url: `${shop.url}/orders/{{orderId}}` }],
      },
    });
    const turn = await call(app, 'POST', `/v1/agents/${agent.body.data.id}/converse`, { key: t.apiKey, body: { message: 'Where is my order A17?' } });
    expect(turn.status).toBe(200);
    const requestId = turn.headers.get('x-request-id')!;

    const traced = await call(app, 'GET', `/v1/traces/${requestId}`, { key: t.apiKey });
    expect(traced.status).toBe(200);
    const spans = traced.body.data.spans as Span[];
    const root = spans.find((s) => s.parentSpanId === undefined)!;
    expect(root).toMatchObject({ name: 'POST /v1/agents/:agentId/converse', attributes: { 'http.route': '/v1/agents/:agentId/converse', 'http.response.status_code': 200, 'cairn.tenant.id': t.scope.tenantId, 'cairn.request.id': requestId } });
    const children = spans.filter((s) => s.parentSpanId === root.spanId);
    const search = children.find((s) => s.name === `search ${ks.body.data.id}`)!;
    expect(search.attributes).toMatchObject({ 'cairn.search.results': expect.any(Number), 'cairn.search.segments': 1, 'cairn.dynamodb.read_units': expect.any(Number) });
    expect(search.attributes['cairn.search.terms']).toBeGreaterThanOrEqual(2); // "where", "order", "a17" less stop words
    expect(search.attributes['cairn.dynamodb.requests']).toBeGreaterThanOrEqual(1);
    const chats = children.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat');
    expect(chats).toHaveLength(2); // the call that chose the tool, the one that answered from it
    expect(chats[0]!.attributes).toMatchObject({ 'gen_ai.provider.name': 'local', 'gen_ai.usage.input_tokens': expect.any(Number), 'gen_ai.response.finish_reasons': ['tool_calls'] });
    expect(children.find((s) => s.name === 'execute_tool order_status')?.attributes).toMatchObject({ 'gen_ai.tool.name': 'order_status', 'gen_ai.tool.call.id': turn.body.data.toolCalls[0].id });
    // Model and tool spans say which agent definition ran: the draft here, a version below.
    for (const span of [...chats, children.find((s) => s.name === 'execute_tool order_status')!]) expect(span.attributes).toMatchObject({ 'cairn.agent.id': agent.body.data.id, 'cairn.agent.version': 'draft' });
    await call(app, 'POST', `/v1/agents/${agent.body.data.id}/versions`, { key: t.apiKey, body: {} });
    const released = await call(app, 'POST', `/v1/agents/${agent.body.data.id}/converse`, { key: t.apiKey, body: { message: 'Where is my order A17?', version: 1, stream: true } });
    const streamedSpans = (await call(app, 'GET', `/v1/traces/${released.headers.get('x-request-id')}`, { key: t.apiKey })).body.data.spans as Span[];
    const labelled = streamedSpans.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat' || s.name.startsWith('execute_tool'));
    expect(labelled.length).toBeGreaterThanOrEqual(3);
    for (const span of labelled) expect(span.attributes['cairn.agent.version'], span.name).toBe('1');

    // Another tenant's trace is not found, nor is a request never made.
    const stranger = await newTenant();
    expect((await call(app, 'GET', `/v1/traces/${requestId}`, { key: stranger.apiKey })).status).toBe(404);
    expect((await call(app, 'GET', '/v1/traces/req_nothing_here', { key: t.apiKey })).status).toBe(404);
  });

  it('carries the trace through the steps queue: a workflow’s steps are spans of the request that started it', async () => {
    const t = await newTenant();
    const wf = await call(app, 'POST', '/v1/workflows', {
      key: t.apiKey,
      body: { name: 'two steps', steps: [{ id: 'first', type: 'generation', config: { model: 'gpt-4', prompt: 'Repeat: {{user_message}}' } }, { id: 'second', type: 'generation', config: { model: 'gpt-4', prompt: 'Again: {{steps.first.output.text}}' } }] },
    });
    const started = await call(app, 'POST', `/v1/workflows/${wf.body.data.id}/execute`, { key: t.apiKey, body: { input: 'hello', mode: 'async' } });
    expect(started.status).toBe(202);
    const requestId = started.headers.get('x-request-id')!;
    await testLocal.workflowSteps!.drain();
    const spans = (await call(app, 'GET', `/v1/traces/${requestId}`, { key: t.apiKey })).body.data.spans as Span[];
    const root = spans.find((s) => s.parentSpanId === undefined)!;
    const steps = spans.filter((s) => s.name.startsWith('workflow.step '));
    expect(steps.map((s) => s.attributes['cairn.step.id'])).toEqual(['first', 'second']);
    // The first step was sent by the request, the second by the first step.
    expect(steps[0]!.parentSpanId).toBe(root.spanId);
    expect(steps[1]!.parentSpanId).toBe(steps[0]!.spanId);
    for (const step of steps) expect(spans.some((s) => s.parentSpanId === step.spanId && s.attributes['gen_ai.operation.name'] === 'chat')).toBe(true);
  });
});
