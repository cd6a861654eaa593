import { createServer, type IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { agents, patchAgent } from '../shared/agents/agents';
import { callableTools, runTool, toolContext } from '../shared/agents/agent-tools';
import { call } from './helpers/http';
import { testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/**
 * OpenAPI tools against a real local shop: its document served as YAML beside its API, read when
 * the agent is written; each allowed operation a tool the model can call.
 */
const YAML_DOCUMENT = `
openapi: 3.0.3
info: { title: Shop, version: "1" }
servers:
  - url: /api
paths:
  /orders/{orderId}:
    parameters:
      - { name: orderId, in: path, required: true, schema: { type: string, pattern: "^[A-Z]+ ?[0-9]+$" }, description: The order number }
    get:
      operationId: getOrder
      summary: Looks up the status of an order
      parameters:
        - { name: fields, in: query, schema: { type: array, items: { type: string } } }
        - { name: X-Trace, in: header, schema: { type: string } }
      responses: { "200": { description: ok } }
  /orders:
    post:
      operationId: createOrder
      summary: Places an order
      requestBody:
        required: true
        content:
          application/json:
            schema: { $ref: "#/components/schemas/NewOrder" }
      responses: { "201": { description: created } }
  /upload:
    post:
      operationId: uploadPhoto
      requestBody:
        required: true
        content: { image/png: {} }
      responses: { "200": { description: ok } }
components:
  schemas:
    NewOrder:
      type: object
      required: [sku, quantity]
      properties:
        sku: { type: string }
        quantity: { type: integer, minimum: 1 }
        note: { type: string, nullable: true }
        parent: { $ref: "#/components/schemas/NewOrder" }
`;

const seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders; body: string }> = [];
const shop = createServer((req, res) => {
  let body = '';
  req.on('data', (d: Buffer) => (body += d.toString()));
  req.on('end', () => {
    if (req.url === '/openapi.yaml') return res.writeHead(200, { 'content-type': 'application/yaml' }).end(YAML_DOCUMENT);
    if (req.url === '/broken.yaml') return res.writeHead(200).end('openapi: [unclosed');
    // A few lines of YAML aliases that expand to 10^9 values if followed.
    if (req.url === '/laughs.yaml') return res.writeHead(200).end(['openapi: 3.0.0', 'a: &a [x, x, x, x, x, x, x, x, x, x]', ...'bcdefghi'.split('').map((k, i) => `${k}: &${k} [${Array(10).fill(`*${'abcdefghi'[i]}`).join(', ')}]`), 'paths:', '  /x:', '    get:', '      operationId: x', '      x-bomb: *i'].join('\n'));
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
    if (req.headers.authorization !== 'Bearer shop-token') return res.writeHead(401).end('{"error":"unauthorized"}');
    if (req.method === 'POST') return res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ created: JSON.parse(body) as unknown }));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ order: decodeURIComponent(/\/orders\/([^?]+)/.exec(req.url!)?.[1] ?? ''), status: 'shipped' }));
  });
});

const app = createLocalApp(testRt);
let port = 0;
let t: TestTenant;
const shopTool = (extra: Record<string, unknown> = {}) => ({ type: 'openapi', name: 'shop', url: `http://localhost:${port}/openapi.yaml`, auth: { type: 'bearer', token: 'shop-token' }, ...extra });

beforeAll(async () => {
  await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
  port = (shop.address() as { port: number }).port;
  t = await newTenant();
});
afterAll(async () => {
  shop.closeAllConnections();
  await new Promise<void>((resolve) => shop.close(() => resolve()));
});

describe('openapi tools', () => {
  it('reads a YAML document from its URL into one tool per callable operation, and calls them with path, query, header and body', async () => {
    const created = await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Shop', model: 'gpt-4', tools: [shopTool()] } });
    expect(created.status).toBe(201);
    const shown = created.body.data.tools[0];
    expect(shown.auth).toEqual({ type: 'bearer', configured: true });
    // The upload takes a PNG body, which a model cannot send: it is left out.
    expect(shown.exposes).toEqual([
      { name: 'shop_getOrder', operationId: 'getOrder', method: 'GET', path: '/orders/{orderId}' },
      { name: 'shop_createOrder', operationId: 'createOrder', method: 'POST', path: '/orders' },
    ]);
    expect(JSON.stringify(created.body)).not.toContain('shop-token');
    expect(shown).not.toHaveProperty('compiled');

    const agent = await agents.get(testRt, t.scope, created.body.data.id);
    const context = toolContext(testRt, t.scope, agent);
    const [getOrder, createOrder] = await callableTools(context);
    expect(getOrder!.description).toBe('Looks up the status of an order (GET /orders/{orderId})');
    expect(getOrder!.parameters).toMatchObject({ properties: { orderId: { type: 'string', description: 'The order number' }, fields: { type: 'array' } }, required: ['orderId'] });

    expect(await runTool(getOrder!, { orderId: 'A 17', fields: ['status', 'eta'], 'X-Trace': 't-1' }, context)).toEqual({ ok: true, result: '{"order":"A 17","status":"shipped"}' });
    expect(seen.at(-1)).toMatchObject({ method: 'GET', url: '/api/orders/A%2017?fields=status&fields=eta', headers: { 'x-trace': 't-1', authorization: 'Bearer shop-token' } });

    // The body's schema came through its $ref; nullable became a null type; the recursive reference an open schema.
    expect(createOrder!.parameters).toMatchObject({ properties: { body: { required: ['sku', 'quantity'], properties: { note: { type: ['string', 'null'] }, parent: {} } } }, required: ['body'] });
    const placed = await runTool(createOrder!, { body: { sku: 'tea', quantity: 2, note: null } }, context);
    expect(placed.ok && JSON.parse(placed.result)).toEqual({ created: { sku: 'tea', quantity: 2, note: null } });
    expect(seen.at(-1)).toMatchObject({ method: 'POST', url: '/api/orders', headers: { 'content-type': 'application/json' } });
    // Arguments are checked against the operation's schema before anything is sent.
    const before = seen.length;
    expect(await runTool(createOrder!, { body: { sku: 'tea', quantity: 0 } }, context)).toMatchObject({ ok: false, error: expect.stringContaining('invalid arguments: body.quantity') });
    expect(await runTool(getOrder!, { orderId: '../admin' }, context)).toMatchObject({ ok: false, error: expect.stringContaining('invalid arguments: orderId') });
    expect(seen.length).toBe(before);
  });

  it('keeps to the allow-list, takes an inline document with a base URL, and keeps the sealed secret when the agent is sent back as read', async () => {
    const created = await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Shop', model: 'gpt-4', tools: [shopTool({ operations: ['getOrder'] })] } });
    expect(created.body.data.tools[0].exposes.map((e: { name: string }) => e.name)).toEqual(['shop_getOrder']);

    const { id, createdAt: _c, updatedAt: _u, version: _v, ...asRead } = created.body.data;
    // What was read goes back as it is (exposes, auth {configured: true}); a merge patch keeps it too.
    expect((await call(app, 'PUT', `/v1/agents/${id}`, { key: t.apiKey, body: asRead })).status).toBe(200);
    expect((await patchAgent(testRt, t.scope, id as string, { temperature: 0.1 })).temperature).toBe(0.1);
    const inline = { ...asRead.tools[0], url: undefined, document: { openapi: '3.1.0', info: { title: 'x', version: '1' }, paths: { '/orders/{orderId}': { get: { operationId: 'getOrder', parameters: [{ name: 'orderId', in: 'path', required: true, schema: { type: 'string' } }] } } } }, baseUrl: `http://localhost:${port}/api/` };
    const replaced = await call(app, 'PUT', `/v1/agents/${id}`, { key: t.apiKey, body: { ...asRead, tools: [inline] } });
    expect(replaced.status).toBe(200);
    const agent = await agents.get(testRt, t.scope, id as string);
    const context = toolContext(testRt, t.scope, agent);
    const [getOrder] = await callableTools(context);
    // The secret the first write sealed still authenticates.
    expect(await runTool(getOrder!, { orderId: 'B2' }, context)).toEqual({ ok: true, result: '{"order":"B2","status":"shipped"}' });
    expect(seen.at(-1)!.url).toBe('/api/orders/B2');
  });

  it.each([
    ['tools[0].document', () => shopTool({ document: { openapi: '3.0.0' } })],
    ['tools[0].document', () => ({ type: 'openapi', name: 'shop' })],
    ['tools[0].operations[0]', () => shopTool({ operations: ['deleteEverything'] })],
    ['tools[0].operations[0]', () => shopTool({ operations: ['uploadPhoto'] })],
    ['tools[0].url', () => shopTool({ url: `http://localhost:${port}/broken.yaml` })],
    ['tools[0].url', () => shopTool({ url: `http://localhost:${port}/missing.json` })],
    // The deployment's guard: 127.0.0.1 is not an allowed host here.
    ['tools[0].url', () => shopTool({ url: `http://127.0.0.1:${port}/openapi.yaml` })],
    ['tools[0].url', () => shopTool({ url: 'file:///etc/passwd' })],
    ['tools[0].url', () => shopTool({ url: `http://localhost:${port}/laughs.yaml` })],
    // References to references: 10 properties of 10 properties … seven levels deep, 10^7 values once resolved.
    ['tools[0].document', () => ({ type: 'openapi', name: 'shop', baseUrl: 'https://a.example', document: { openapi: '3.0.0', paths: { '/x': { post: { operationId: 'x', requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/L0' } } } } } } }, components: { schemas: Object.fromEntries(Array.from({ length: 8 }, (_, level) => [`L${level}`, level === 7 ? { type: 'string' } : { type: 'object', properties: Object.fromEntries(Array.from({ length: 10 }, (_, p) => [`p${p}`, { $ref: `#/components/schemas/L${level + 1}` }])) }])) } } })],
    ['tools[0].document.openapi', () => ({ type: 'openapi', name: 'shop', document: { swagger: '2.0', paths: {} } })],
    ['tools[0].baseUrl', () => ({ type: 'openapi', name: 'shop', document: { openapi: '3.0.0', paths: { '/x': { get: { operationId: 'x' } } } } })],
    ['tools[0].document', () => ({ type: 'openapi', name: 'shop', document: { openapi: '3.0.0', servers: [{ url: 'https://a.example' }], paths: { '/x': { get: { operationId: 'x', parameters: [{ $ref: 'other.yaml#/p' }] } } } } })],
  ])('answers 400 naming %s for a document it cannot use', async (field, tool) => {
    const res = await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Bad', model: 'gpt-4', tools: [tool()] } });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.details.field).toBe(field);
    if (JSON.stringify(tool()).includes('laughs')) expect(res.body.error.details.reason).toMatch(/anchors and aliases/);
    if (JSON.stringify(tool()).includes('L7')) expect(res.body.error.details.reason).toMatch(/too large once its \$refs are resolved/);
  });

  it('lets the built-in engine call an operation from a question, end to end', async () => {
    const created = await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Shop', model: 'gpt-4', tools: [shopTool({ operations: ['getOrder'] })] } });
    const res = await call(app, 'POST', `/v1/agents/${created.body.data.id}/converse`, { key: t.apiKey, body: { message: 'What is the status of order A17?' } });
    expect(res.status).toBe(200);
    expect(res.body.data.toolCalls).toMatchObject([{ tool: 'shop_getOrder', arguments: { orderId: 'A17' }, result: '{"order":"A17","status":"shipped"}' }]);
    expect(res.body.data.reply).toContain('shipped');
  });
});
