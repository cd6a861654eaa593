import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { AppEnv } from '../../shared/http/context';
import { endUserTokenHeaders, requestEndUser } from '../../shared/http/end-user';
import { oauthCallbackUrl } from '../../shared/http/public-url';
import { commonErrors, jsonContent } from '../../shared/http/openapi-schemas';
import type { RuntimeWith } from '../../shared/runtime';
import { cairnMcpServer } from './cairn-tools';


const jsonRpcMessage = z.looseObject({ jsonrpc: z.literal('2.0'), method: z.string().optional(), id: z.union([z.string(), z.number()]).optional() }).openapi('JsonRpcMessage');

/** `/mcp`: the Streamable HTTP endpoint (POST), and 405 for what needs a session. */
export function registerMcpRoutes(app: OpenAPIHono<AppEnv>, rt: RuntimeWith<'models' | 'secrets' | 'queues'>) {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/mcp',
      operationId: 'mcp',
      tags: ['MCP'],
      summary: 'The MCP endpoint (Streamable HTTP): the tenant’s agents, knowledge search and workflows as MCP tools',
      description:
        'JSON-RPC 2.0 as the Model Context Protocol defines it; point an MCP client at this URL with the API key as `X-API-Key` or `Authorization: Bearer`. ' +
        'Tools: list_agents, ask_agent, run_agent, get_run, list_knowledge_sources, search_knowledge, list_workflows, run_workflow, get_execution. Send `Accept: application/json, text/event-stream`.',
      security: [{ ApiKeyAuth: [] }, { BearerAuth: [] }],
      request: {
        headers: endUserTokenHeaders,
        body: {
          content: {
            'application/json': {
              schema: z.union([jsonRpcMessage, z.array(jsonRpcMessage)]),
              example: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'example-client', version: '1.0.0' } } },
            },
          },
          required: true,
        },
      },
      responses: {
        200: jsonContent(z.union([jsonRpcMessage, z.array(jsonRpcMessage)]), 'The JSON-RPC response(s)'),
        202: { description: 'Notifications and responses accepted (nothing to answer)' },
        406: jsonContent(jsonRpcMessage, 'The Accept header must name both application/json and text/event-stream'),
        ...commonErrors,
      },
    }),
    async (c) => {
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      // The end user the tools act for (ask_agent, run_agent, search_knowledge): only a verified token names one here.
      const server = cairnMcpServer(rt, c.get('identity'), c.get('requestId'), await requestEndUser(c, rt), oauthCallbackUrl(c));
      await server.connect(transport);
      try {
        // The body guard and the route have parsed (and checked) the JSON already.
        return await transport.handleRequest(c.req.raw, { parsedBody: await c.req.json() });
      } finally {
        await server.close();
      }
    },
  );
  // GET (a server-initiated stream) and DELETE (a session's end) need sessions this endpoint does
  // not keep; an open stream would also hold a Lambda until its timeout. Clients go on with POST.
  app.on(['GET', 'DELETE'], '/mcp', (c) => {
    c.header('Allow', 'POST');
    return c.json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this endpoint keeps no session; send requests with POST' }, id: null }, 405);
  });
}
