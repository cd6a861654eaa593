import { z } from '@hono/zod-openapi';
import { AppError } from '../errors';
import { outboundRequest, type OutboundPolicy } from '../net/outbound';
import type { Runtime } from '../runtime';
import { assertSearchable, searchSource } from '../search/search';
import type { TenantScope } from '../tenancy';
import type { Agent } from './agent-schema';
import { openToolSecret, PLACEHOLDER, type StoredTool } from './agent-tools';
import type { KnowledgeSourceRecord } from './knowledge-sources';
import { executeAndWait } from './workflow-execution';
import { templateText } from './workflow-templates';

/**
 * Runs one call of an agent's tool. A tool's failure (bad arguments, refused or failing URL, a
 * workflow that failed) is an outcome the model is told about, never an exception of the turn;
 * results are capped in size, with a note when cut.
 */
export type ToolOutcome = { ok: true; result: string } | { ok: false; error: string };

export interface ToolCallOptions {
  /** Per call (default 10 s). */
  timeoutMs?: number;
  /** Result text kept (default 16 KiB). */
  maxResultBytes?: number;
  signal?: AbortSignal;
  /** The outbound policy (default: the deployment's). */
  policy?: OutboundPolicy;
}

/** The JSON Schema of a tool's arguments, as models are given it. */
export function toolParameters(tool: StoredTool): Record<string, unknown> {
  if (tool.type === 'http') return tool.parameters;
  if (tool.type === 'knowledge_search') {
    return { type: 'object', properties: { query: { type: 'string', description: 'What to search for' }, topK: { type: 'integer', minimum: 1, maximum: 20 } }, required: ['query'] };
  }
  return { type: 'object', properties: { input: { type: 'string', description: 'The workflow’s input' }, parameters: { type: 'object' } }, required: ['input'] };
}

function cap(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text);
  if (bytes.length <= maxBytes) return text;
  return `${bytes.subarray(0, maxBytes).toString('utf8').replace(/\uFFFD$/, '')}\n[truncated: ${bytes.length} bytes, ${maxBytes} kept]`;
}

function checkArguments(tool: StoredTool, args: unknown): Record<string, unknown> {
  const parsed = z.fromJSONSchema(toolParameters(tool)).safeParse(args ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ToolFailure(`invalid arguments: ${issue.path.join('.') || 'arguments'} ${issue.message}`);
  }
  return (parsed.data ?? {}) as Record<string, unknown>;
}

class ToolFailure extends Error {}


/** `{{name}}` in a URL: the argument, URL-encoded (it cannot change the path or the host). */
const renderUrl = (template: string, args: Record<string, unknown>) => template.replace(PLACEHOLDER, (_, name: string) => encodeURIComponent(templateText(args[name])));

/** `{{name}}` in a header value: the argument, refused if it could start another header. */
function renderHeader(template: string, args: Record<string, unknown>): string {
  const value = template.replace(PLACEHOLDER, (_, name: string) => templateText(args[name]));
  if (/[\r\n]/.test(value)) throw new ToolFailure('invalid arguments: a header value cannot contain a line break');
  return value;
}

/** A JSON body template: a string that is exactly `{{name}}` becomes the argument itself, other strings interpolate. */
function renderBody(template: unknown, args: Record<string, unknown>): unknown {
  if (typeof template === 'string') {
    const whole = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$/.exec(template);
    if (whole) return args[whole[1]!];
    return template.replace(PLACEHOLDER, (_, name: string) => templateText(args[name]));
  }
  if (Array.isArray(template)) return template.map((v) => renderBody(v, args));
  if (template && typeof template === 'object') return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, renderBody(v, args)]));
  return template;
}

async function callHttp(rt: Runtime, scope: TenantScope, tool: Extract<StoredTool, { type: 'http' }>, args: Record<string, unknown>, options: ToolCallOptions): Promise<string> {
  const headers: Record<string, string> = { accept: 'application/json, text/plain;q=0.9, */*;q=0.5' };
  for (const [name, value] of Object.entries(tool.headers ?? {})) headers[name.toLowerCase()] = renderHeader(value, args);
  if (tool.auth) {
    const secret = await openToolSecret(rt, scope, tool.name, tool.auth);
    if (tool.auth.type === 'bearer') headers.authorization = `Bearer ${secret}`;
    else if (tool.auth.type === 'header') headers[tool.auth.name!.toLowerCase()] = secret;
    else headers.authorization = `Basic ${Buffer.from(`${tool.auth.username}:${secret}`).toString('base64')}`;
  }
  const sendsBody = tool.method !== 'GET' && tool.method !== 'DELETE';
  const body = tool.body !== undefined ? renderBody(tool.body, args) : sendsBody ? args : undefined;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await outboundRequest(
    renderUrl(tool.url, args),
    { method: tool.method, headers, body: body === undefined ? undefined : JSON.stringify(body), timeoutMs: options.timeoutMs ?? 10_000, maxBytes: options.maxResultBytes ?? 16_384, signal: options.signal },
    options.policy,
  );
  const text = response.body.toString('utf8') + (response.truncated ? '\n[truncated]' : '');
  if (response.status < 200 || response.status >= 300) throw new ToolFailure(`HTTP ${response.status}: ${text.slice(0, 500)}`);
  return text;
}

async function searchKnowledge(rt: Runtime, scope: TenantScope, agent: Agent, args: Record<string, unknown>): Promise<string> {
  const query = String(args.query);
  const topK = typeof args.topK === 'number' ? args.topK : 5;
  const found: Array<{ title: string; text: string; score: number; where: string }> = [];
  for (const id of agent.knowledgeSourceIds) {
    const source = await rt.store.records.getRecord<KnowledgeSourceRecord>(scope, 'KS', id);
    if (!source) continue;
    try {
      assertSearchable(source);
    } catch {
      continue; // not ready: the other sources still answer
    }
    const { results } = await searchSource(rt, scope, source, { query, topK });
    found.push(...results.map((r) => ({ title: r.title, text: r.text, score: r.score, where: r.path ?? r.rowKey ?? r.documentId })));
  }
  found.sort((a, b) => b.score - a.score);
  if (found.length === 0) return 'No passage matched.';
  return found.slice(0, topK).map((r, i) => `[${i + 1}] ${r.title} (${r.where}): ${r.text}`).join('\n\n');
}

async function runWorkflow(rt: Runtime, scope: TenantScope, tool: Extract<StoredTool, { type: 'workflow' }>, args: Record<string, unknown>, options: ToolCallOptions): Promise<string> {
  const { execution, finished } = await executeAndWait(
    rt,
    scope,
    tool.workflowId,
    { input: templateText(args.input), parameters: (args.parameters as Record<string, unknown> | undefined) ?? {} },
    options.timeoutMs ?? 10_000,
  );
  if (!finished) return `The workflow is still running (execution ${execution.id}); its result is not available yet.`;
  if (execution.status !== 'succeeded') throw new ToolFailure(`the workflow ${execution.status}: ${execution.error?.message ?? ''}`);
  return templateText(execution.output);
}

export async function runTool(rt: Runtime, scope: TenantScope, agent: Agent, tool: StoredTool, args: unknown, options: ToolCallOptions = {}): Promise<ToolOutcome> {
  const maxBytes = options.maxResultBytes ?? 16_384;
  try {
    const checked = checkArguments(tool, args);
    const result =
      tool.type === 'http'
        ? await callHttp(rt, scope, tool, checked, options)
        : tool.type === 'knowledge_search'
          ? await searchKnowledge(rt, scope, agent, checked)
          : await runWorkflow(rt, scope, tool, checked, options);
    return { ok: true, result: cap(result, maxBytes) };
  } catch (error) {
    if (error instanceof ToolFailure || error instanceof AppError) return { ok: false, error: cap(error.message, 2000) };
    throw error;
  }
}
