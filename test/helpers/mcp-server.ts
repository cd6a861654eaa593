import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/**
 * A real MCP server (the official SDK, Streamable HTTP, stateful sessions) standing in for a shop's:
 * `order_status`, `refund_order`, `broken` (which reports an error) and `stock_level` (with an output schema). It refuses requests without
 * the bearer token (or one its check refuses) and records the JSON-RPC methods it was sent.
 */
export interface ShopMcp {
  url: string;
  methods: string[];
  sessionsClosed: number;
  close(): Promise<void>;
}

function shopServer(): McpServer {
  const server = new McpServer({ name: 'shop', version: '1.0.0' });
  server.registerTool(
    'order_status',
    { description: 'Looks up the delivery status of an order by its number', inputSchema: { orderId: z.string().regex(/^[A-Z]\d+$/).describe('The order number, like A17') } },
    ({ orderId }) => ({ content: [{ type: 'text', text: `order ${orderId}: shipped, arriving 2026-11-25` }] }),
  );
  server.registerTool('refund_order', { description: 'Refunds an order', inputSchema: { orderId: z.string(), amount: z.number() } }, ({ orderId, amount }) => ({
    content: [{ type: 'text', text: `refunded ${amount} on ${orderId}` }],
  }));
  // A tool whose input schema is 30 KB of descriptions: too large to send the model every turn.
  server.registerTool('huge', { description: 'Takes everything', inputSchema: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`field${i}`, z.string().describe('x'.repeat(1000))])) }, () => ({ content: [{ type: 'text', text: 'ok' }] }));
  server.registerTool('broken', { description: 'Always fails', inputSchema: {} }, () => ({ content: [{ type: 'text', text: 'the warehouse is offline' }], isError: true }));
  // Declares its result's shape: a client checks structured results against it (with the validator it is given).
  server.registerTool(
    'stock_level',
    { description: 'Units in stock of a product', inputSchema: { sku: z.string() }, outputSchema: { sku: z.string(), units: z.number().int().min(0), updatedAt: z.iso.datetime() } },
    ({ sku }) => {
      const result = { sku, units: sku === 'NEG' ? -1 : 12, updatedAt: '2026-11-26T10:00:00Z' };
      return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
    },
  );
  return server;
}

async function bodyOf(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

/** `token`: the bearer token it takes, or a check of the bearer token a request carries (an end user's, say). */
export async function startShopMcp(token: string | ((bearer: string | undefined) => Promise<boolean>) = 'mcp-token'): Promise<ShopMcp> {
  const allowed = typeof token === 'string' ? async (bearer: string | undefined) => bearer === token : token;
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const state: ShopMcp = { url: '', methods: [], sessionsClosed: 0, close: async () => undefined };
  const http: Server = createServer((req, res) => {
    void (async () => {
      if (!(await allowed(/^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1]))) return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      const body = req.method === 'POST' ? await bodyOf(req) : undefined;
      for (const message of [body].flat()) if (message && typeof message === 'object' && 'method' in message) state.methods.push(String(message.method));
      const sessionId = req.headers['mcp-session-id'] as string | undefined;
      let transport = sessionId ? transports.get(sessionId) : undefined;
      if (!transport) {
        if (sessionId) return void res.writeHead(404).end();
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => void transports.set(id, transport!),
          onsessionclosed: (id) => {
            transports.delete(id);
            state.sessionsClosed++;
          },
        });
        await shopServer().connect(transport);
      }
      await transport.handleRequest(req, res, body);
    })();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  state.url = `http://localhost:${(http.address() as { port: number }).port}/mcp`;
  state.close = async () => {
    for (const transport of transports.values()) await transport.close();
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  };
  return state;
}
