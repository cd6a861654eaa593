import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { mcpJsonSchemaValidator } from '../../shared/tools';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { onFirstUse } from '../../shared/load-once';
import type { getExecution } from './tool-work';
import { templateText } from '../../shared/templates';
import { AppError } from '../../shared/errors';
import { errorFields, log } from '../../shared/log';
import type { Runtime } from '../../shared/runtime';
import type { TenantScope } from '../../shared/tenancy';
import { turnUser, type EndUser } from '../../shared/identity';

/**
 * Cairn as an MCP server: a tenant's agents, knowledge search and workflows as MCP tools, so any MCP
 * client (Claude Desktop, Cursor, an agent framework) can use a tenant. Each tool is one domain
 * call, as a route is; what it answers is text a model reads, with ids to follow up.
 */
const LIST_LIMIT = 50;
/** How long run_workflow waits for the execution before answering with its id (get_execution follows it). */
const DEFAULT_WAIT_SECONDS = 20;

/** The agents, knowledge and workflows code the tools call: loaded with the first tool call. */
const work = onFirstUse(() => import('./tool-work'));

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

/** A tool's failure as MCP reports it (isError): the client's mistake said plainly, anything else without internals. */
function failure(error: unknown, scope: TenantScope, tool: string, requestId: string): CallToolResult {
  if (error instanceof AppError && error.statusCode < 500) return { content: [{ type: 'text', text: error.message }], isError: true };
  log.error('MCP tool failed', { tenantId: scope.tenantId, tool, requestId, ...errorFields(error) });
  const retry = error instanceof AppError && error.retryable ? ' It may work if tried again.' : '';
  return { content: [{ type: 'text', text: `The ${tool} tool failed on the server (request ${requestId}).${retry}` }], isError: true };
}

const cursor = z.string().max(2000).optional().describe('nextCursor of the previous page');

function listing<T extends { id: string; name: string; description?: string }>(page: { items: T[]; nextCursor: string | null }, noun: string, extra: (item: T) => string = () => ''): CallToolResult {
  if (page.items.length === 0) return text(`No ${noun}s.`);
  const lines = page.items.map((item) => `- ${item.id} — ${item.name}${item.description ? `: ${item.description}` : ''}${extra(item)}`);
  return text([...lines, ...(page.nextCursor ? [`More: call again with cursor ${page.nextCursor}`] : [])].join('\n'));
}

/** A server with the tenant's tools; one per request (Cairn's MCP endpoint keeps no session). */
/** Where a passage sits in a paged document, as a reader cites it: ` p. 3`, ` pp. 3–4`, ` slide 2`, ` sheet Prices`. */
function whereIn(location: { page?: number; pageEnd?: number; slide?: number; sheet?: string } | undefined): string {
  if (!location) return '';
  if (location.page !== undefined) return location.pageEnd ? ` pp. ${location.page}–${location.pageEnd}` : ` p. ${location.page}`;
  if (location.slide !== undefined) return ` slide ${location.slide}`;
  return location.sheet !== undefined ? ` sheet ${location.sheet}` : '';
}

export function cairnMcpServer(rt: Runtime, identity: { scope: TenantScope; keyId: string }, requestId: string, user?: EndUser, callbackUrl?: string): McpServer {
  const { scope, keyId } = identity;
  const server = new McpServer(
    { name: 'cairn', version: '1.0.0' },
    { instructions: 'Cairn: ask the tenant’s agents, search its knowledge sources, run its workflows. List them first to find their ids.', jsonSchemaValidator: mcpJsonSchemaValidator() },
  );
  /** A tool's run, its failures reported as MCP tool errors. */
  const guarded =
    <Args>(name: string, run: (args: Args) => Promise<CallToolResult>) =>
    async (args: Args): Promise<CallToolResult> => {
      try {
        return await run(args);
      } catch (error) {
        return failure(error, scope, name, requestId);
      }
    };
  const readOnly = { readOnlyHint: true, openWorldHint: false };
  /** A list tool: the tenant's records of one kind, a page at a time. */
  const listTool = <T extends { id: string; name: string; description?: string }>(name: string, noun: string, shows: string, list: (page: { limit: number; cursor?: string }) => Promise<{ items: T[]; nextCursor: string | null }>, extra?: (item: T) => string) =>
    server.registerTool(
      name,
      { title: `List ${noun}s`, description: `The tenant’s ${noun}s (${shows}), newest first.`, inputSchema: { cursor }, annotations: readOnly },
      guarded(name, async ({ cursor }) => listing(await list({ limit: LIST_LIMIT, cursor }), noun, extra)),
    );

  listTool('list_agents', 'agent', 'id, name, description', async (page) => (await work()).agents.list(rt, scope, page));
  server.registerTool(
    'ask_agent',
    {
      title: 'Ask an agent',
      description: 'Sends a message to one of the tenant’s agents and returns its reply, with the passages it cited. Pass the sessionId it returns to continue the conversation.',
      inputSchema: {
        agentId: z.string().min(1).max(200).describe('The agent’s id (agt_…), with `:<alias>` or `:<version>` after it to ask a release; list_agents finds it'),
        message: z.string().min(1).max(32_000),
        sessionId: z.string().max(200).optional().describe('Continues an earlier conversation'),
      },
    },
    guarded('ask_agent', async ({ agentId: address, message, sessionId }) => {
      const { agentAddress, converse } = await work();
      const { agentId, target } = agentAddress(address, 'agentId');
      const { data } = await converse(rt, scope, agentId, { message, sessionId, keyId, target, ...turnUser(user), ...(callbackUrl ? { callbackUrl } : {}) });
      if (data.status === 'requires_action' && data.requiredActions?.length) {
        return text(`The agent acts as you at ${data.requiredActions.map((a) => `${a.provider}: connect your account at ${a.url}`).join('; ')}. Then resume its turn: POST /v1/agents/${agentId}/converse with {"context": {"sessionId": "${data.sessionId}"}, "resume": true}.`);
      }
      if (data.status === 'requires_action') {
        return text(`The agent wants to call ${data.pendingToolCalls.map((c) => c.tool).join(', ')}, which needs a person’s approval: approve it through Cairn’s API (POST /v1/agents/${agentId}/converse with toolApprovals, session ${data.sessionId}).`);
      }
      const sources = data.sources.map((s, i) => `[${i + 1}] ${s.path ?? s.rowKey ?? s.documentId}${whereIn(s.location)}: ${s.snippet}`);
      return text([data.reply, ...(sources.length ? ['', 'Sources:', ...sources] : []), '', `(session ${data.sessionId})`, `(agent version ${data.agentVersion})`].join('\n'));
    }),
  );
  server.registerTool(
    'run_agent',
    {
      title: 'Start a background run of an agent',
      description: 'Gives one of the tenant’s agents a job of many tool rounds or minutes: it runs in the background, and get_run tells its status and, once it is done, its reply.',
      inputSchema: {
        agentId: z.string().min(1).max(200).describe('The agent’s id (agt_…), with `:<alias>` or `:<version>` after it to run a release'),
        message: z.string().min(1).max(32_000),
        sessionId: z.string().max(200).optional().describe('Continues an earlier conversation'),
        maxToolSteps: z.int().min(1).max(100).optional().describe('Rounds of tool calls before a final answer (default 20)'),
      },
    },
    guarded('run_agent', async ({ agentId: address, message, sessionId, maxToolSteps }) => {
      const { agentAddress, createRun } = await work();
      const { agentId, target } = agentAddress(address, 'agentId');
      const run = await createRun(rt, scope, agentId, { converse: { message, sessionId, keyId, target, ...turnUser(user), ...(callbackUrl ? { callbackUrl } : {}) }, maxToolSteps: maxToolSteps ?? 20, maxDurationSeconds: 900 });
      return text(`Run ${run.id} of agent ${run.agentId} is ${run.status}: ask get_run for its status and reply (session ${run.sessionId}).`);
    }),
  );
  server.registerTool(
    'get_run',
    {
      title: 'Get a background run',
      description: 'The status of a run run_agent started, with its steps so far; once it is done, its reply.',
      inputSchema: { agentId: z.string().min(1).max(200), runId: z.string().min(1).max(100) },
      annotations: readOnly,
    },
    guarded('get_run', async ({ agentId: address, runId }) => {
      const { agentAddress, getRun } = await work();
      const run = await getRun(rt, scope, agentAddress(address, 'agentId').agentId, runId);
      if (run.status === 'completed') return text(`${run.reply ?? ''}\n\n(run ${run.id}, ${run.step} tool rounds, session ${run.sessionId})`);
      if (run.status === 'failed' || run.status === 'expired' || run.status === 'cancelled') return { content: [{ type: 'text', text: `Run ${run.id} ${run.status}${run.error ? `: ${run.error.message}` : ''}` }], isError: true };
      const waiting = run.status === 'requires_action' ? `; it waits for a person to approve ${(run.round ?? []).map((c) => c.name).join(', ')} (POST /v1/agents/${run.agentId}/runs/${run.id}/approvals)` : '';
      return text(`Run ${run.id} is ${run.status} after ${run.step} tool rounds${waiting}; ask again later.`);
    }),
  );
  listTool('list_knowledge_sources', 'knowledge source', 'id, name, status', async (page) => (await work()).knowledgeSources.list(rt, scope, page), (source) => ` [${source.status}]`);
  server.registerTool(
    'search_knowledge',
    {
      title: 'Search a knowledge source',
      description: 'Searches one of the tenant’s knowledge sources and returns the best passages.',
      inputSchema: {
        knowledgeSourceId: z.string().min(1).max(200).describe('The source’s id (ks_…); list_knowledge_sources finds it'),
        query: z.string().min(1).max(4000),
        topK: z.int().min(1).max(20).optional(),
      },
      annotations: readOnly,
    },
    guarded('search_knowledge', async ({ knowledgeSourceId, query, topK }) => {
      const { results } = await (await work()).searchKnowledgeSource(rt, scope, knowledgeSourceId, { query, topK: topK ?? 5 }, { keyId, user });
      if (results.length === 0) return text('No passage matched.');
      return text(results.map((r, i) => `[${i + 1}] ${r.title} (${r.path ?? r.rowKey ?? r.documentId}${whereIn(r.location)}, score ${r.score.toFixed(3)}):\n${r.text}`).join('\n\n'));
    }),
  );
  listTool('list_workflows', 'workflow', 'id, name, description', async (page) => (await work()).listWorkflows(rt, scope, page));
  server.registerTool(
    'run_workflow',
    {
      title: 'Run a workflow',
      description: `Runs one of the tenant’s workflows on an input and returns its output; one still running after waitSeconds (default ${DEFAULT_WAIT_SECONDS}) returns its execution id for get_execution.`,
      inputSchema: {
        workflowId: z.string().min(1).max(200).describe('The workflow’s id (wf_…); list_workflows finds it'),
        input: z.string().max(32_000),
        parameters: z.record(z.string(), z.unknown()).optional(),
        waitSeconds: z.int().min(0).max(25).optional(),
      },
    },
    guarded('run_workflow', async ({ workflowId, input, parameters, waitSeconds }) => {
      const { execution, finished } = await (await work()).executeAndWait(rt, scope, workflowId, { input, parameters: parameters ?? {}, keyId }, (waitSeconds ?? DEFAULT_WAIT_SECONDS) * 1000);
      return executionText(execution, finished);
    }),
  );
  server.registerTool(
    'get_execution',
    {
      title: 'Get a workflow execution',
      description: 'The status, and when finished the output, of a workflow execution run_workflow started.',
      inputSchema: { workflowId: z.string().min(1).max(200), executionId: z.string().min(1).max(200) },
      annotations: readOnly,
    },
    guarded('get_execution', async ({ workflowId, executionId }) => {
      const execution = await (await work()).getExecution(rt, scope, workflowId, executionId);
      return executionText(execution, execution.status !== 'running');
    }),
  );
  return server;
}

function executionText(execution: Awaited<ReturnType<typeof getExecution>>, finished: boolean): CallToolResult {
  if (!finished) return text(`Execution ${execution.id} is ${execution.status}; ask get_execution for its result later.`);
  if (execution.status !== 'succeeded') return { content: [{ type: 'text', text: `Execution ${execution.id} ${execution.status}: ${execution.error?.message ?? ''}` }], isError: true };
  return text(`${templateText(execution.output)}\n\n(execution ${execution.id})`);
}
