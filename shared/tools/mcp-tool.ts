import { ToolFailure } from '../errors';
import { createHash } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { errorFields, log } from '../log';
import { outboundFetch } from '../net/outbound';
import { MAX_EXPOSED, type McpDefinition, type Stored } from './definitions';
import type { McpListedTool } from '../runtime';
import { AuthorizationRequired, authorizedFetch, toolAuthorization } from './tool-auth';
import { exposedName, type ExposedTool, type ToolContext, type ToolKind } from './tool-kind';

/**
 * `mcp`: the tools of a remote MCP server (Streamable HTTP, with the official SDK's client; every
 * request through the outbound guard), `<name>_<tool>`, limited to an allow-list when one is given.
 * The server's tool list is kept for a short while per instance (the runtime's cache), so a turn
 * does not list it again.
 */
const MAX_SCHEMA_BYTES = 16 * 1024;
type McpTool = Stored<McpDefinition>;

/** Connects, does the work, and always ends the session. Failures become tool failures. */
async function withClient<T>(tool: McpTool, context: ToolContext, use: (client: Client, options: { signal?: AbortSignal; timeout: number }) => Promise<T>): Promise<T> {
  // Loaded when first used: the SDK builds hundreds of schemas as it loads (~25 ms of every cold start otherwise).
  const [{ Client }, { StreamableHTTPClientTransport }, { mcpJsonSchemaValidator }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('./mcp-validator'),
  ]);
  // A 401 to the end user's token is refreshed and sent once more before the SDK sees it (it would give up).
  const fetch = authorizedFetch(await toolAuthorization(context, tool.name, tool.auth), outboundFetch(context.policy, { timeoutMs: context.timeoutMs }));
  const transport = new StreamableHTTPClientTransport(new URL(tool.url), { fetch });
  const client = new Client({ name: 'cairn', version: '1.0.0' }, { jsonSchemaValidator: mcpJsonSchemaValidator() });
  const options = { signal: context.signal, timeout: context.timeoutMs };
  try {
    await client.connect(transport, options);
    return await use(client, options);
  } catch (error) {
    if (error instanceof ToolFailure) throw error;
    throw new ToolFailure(`the MCP server ${new URL(tool.url).host} failed: ${(error as Error).message}`);
  } finally {
    await transport.terminateSession().catch(() => undefined);
    await client.close().catch(() => undefined);
  }
}

async function listTools(tool: McpTool, context: ToolContext): Promise<McpListedTool[]> {
  // An end user's connection may see tools another's does not: their lists are their own.
  const key = createHash('sha256').update(JSON.stringify([context.scope.tenantId, tool.url, tool.auth ?? null, tool.auth?.type === 'oauth2' ? (context.user?.id ?? null) : null])).digest('base64url');
  const cached = context.rt.caches.mcpToolLists.get(key);
  if (cached) return cached;
  const tools = await withClient(tool, context, async (client, options) => {
    const all: McpListedTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const listed = await client.listTools(cursor ? { cursor } : {}, options);
      all.push(...listed.tools);
      cursor = listed.nextCursor;
      if (!cursor) break;
    }
    return all;
  });
  context.rt.caches.mcpToolLists.set(key, tools);
  return tools;
}

type Content = { type: string; text?: string; mimeType?: string; uri?: string; name?: string; resource?: { uri: string; text?: string } };

/** A call's result as the text a model reads: text parts as they are, other parts named. */
function textOf(result: { content?: Content[]; structuredContent?: unknown }): string {
  const parts = (result.content ?? []).map((c) =>
    c.type === 'text' ? (c.text ?? '') : c.type === 'resource' ? (c.resource?.text ?? `[resource ${c.resource?.uri}]`) : c.type === 'resource_link' ? `[${c.name ?? 'link'}](${c.uri})` : `[${c.type}${c.mimeType ? ` ${c.mimeType}` : ''}]`,
  );
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return parts.join('\n');
}

/**
 * What the model is given for a server whose tools the end user must connect to list: calling it
 * asks them to connect (the turn pauses where it can); once connected, the server's own tools are
 * listed for the turn's next step.
 */
function connectTool(tool: McpTool, missing: AuthorizationRequired): ExposedTool {
  return {
    name: tool.name,
    description: `Tools at ${new URL(tool.url).host} that act as the end user: call this first to have them connect their ${missing.provider} account.`,
    parameters: { type: 'object', properties: {} },
    requireApproval: false,
    async call(_args, context) {
      await listTools(tool, context);
      return `The end user's ${missing.provider} account is connected: the ${tool.name} tools are available from the next step.`;
    },
  };
}

export const mcpTool: ToolKind<McpDefinition, McpTool> = {
  type: 'mcp',
  async expose(tool, context) {
    let listed: McpListedTool[];
    try {
      listed = await listTools(tool, context);
    } catch (error) {
      // The server's tools are the end user's to list: until they connect, one tool stands for them, and calling it asks them to.
      if (error instanceof AuthorizationRequired) return [connectTool(tool, error)];
      // The turn goes on without this server's tools; the log says why.
      log.warn('MCP server tools not listed', { tenantId: context.scope.tenantId, agentId: context.agent?.id, tool: tool.name, ...errorFields(error) });
      return [];
    }
    const chosen = tool.allowedTools ? listed.filter((t) => tool.allowedTools!.includes(t.name)) : listed.slice(0, MAX_EXPOSED);
    // Every turn sends the model each tool's schema: one a server made enormous is left out, not sent.
    const allowed = chosen.filter((remote) => {
      const fits = Buffer.byteLength(JSON.stringify(remote.inputSchema ?? {})) <= MAX_SCHEMA_BYTES;
      if (!fits) log.warn('MCP tool left out: its input schema is too large', { tenantId: context.scope.tenantId, agentId: context.agent?.id, tool: tool.name, remote: remote.name, limitBytes: MAX_SCHEMA_BYTES });
      return fits;
    });
    return allowed.map(
      (remote): ExposedTool => ({
        name: exposedName(tool.name, remote.name),
        description: (remote.description ?? remote.name).slice(0, 2000),
        parameters: { ...remote.inputSchema, type: 'object' },
        requireApproval: tool.requireApproval,
        ...(tool.policy ? { policy: tool.policy } : {}),
        call: (args, callContext) =>
          withClient(tool, callContext, async (client, options) => {
            const result = (await client.callTool({ name: remote.name, arguments: args }, undefined, options)) as { content?: Content[]; structuredContent?: unknown; isError?: boolean };
            const text = textOf(result);
            if (result.isError) throw new ToolFailure(text || 'the tool reported an error');
            return text;
          }),
      }),
    );
  },
};
