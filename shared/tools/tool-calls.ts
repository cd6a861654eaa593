import { z } from '@hono/zod-openapi';
import { AppError, ToolFailure } from '../errors';
import { emitMetrics } from '../metrics';
import { inSpan, markFailed } from '../telemetry';
import type { OutboundPolicy } from '../net/outbound';
import type { Runtime } from '../runtime';
import type { TenantScope } from '../tenancy';
import { AuthorizationRequired, sealAuth, showAuth } from './tool-auth';
import type { StoredTool, ToolInput, toolOutput } from './definitions';
import { type CallableTool, type CallingAgent, type ToolContext, type ToolKind, type ToolWait } from './tool-kind';
import type { EndUser } from '../identity';

/**
 * What is done with one tool definition, whatever its kind: made ready to store, shown, exposed,
 * called. Kinds are given (`kind`), so agents' full registry (index.ts) and workflow `tool` steps
 * (the kinds that call out) share these without one depending on the other.
 */
type AnyKind = ToolKind<ToolInput, StoredTool>;

/** One definition made ready to store; `kept`: the stored one it replaces, `at`: its field, for errors. */
export async function prepareTool(kind: AnyKind, rt: Runtime, scope: TenantScope, tool: ToolInput, kept: StoredTool | undefined, at: string, policy: OutboundPolicy = rt.outbound): Promise<StoredTool> {
  // The request's auth (its secret in clear) is never stored: sealed, or left out.
  const { auth: _clear, ...rest } = (kind.prepare ? await kind.prepare(rt, scope, tool, at, { policy }) : tool) as StoredTool;
  if (!('auth' in tool) || !tool.auth) return rest;
  return { ...rest, auth: await sealAuth(rt, scope, tool.name, tool.auth, kept?.auth, `${at}.auth`) };
}

/** A definition as responses show it: no sealed secret (`configured: true` in its place), what its kind shows. */
export function presentTool(kind: AnyKind, tool: StoredTool): z.infer<typeof toolOutput> {
  const shown = (kind.present ? kind.present(tool) : tool) as Record<string, unknown>;
  return { ...shown, ...(tool.auth ? { auth: showAuth(tool.auth) } : {}) } as z.infer<typeof toolOutput>;
}

/** What one stored definition gives: one tool, or one per operation or MCP tool. */
export async function toolsOf(kind: AnyKind, tool: StoredTool, context: ToolContext): Promise<CallableTool[]> {
  return (await kind.expose(tool, context)).map((t) => ({ ...t, kind: tool.type }));
}

export interface ToolCallOptions {
  /** Per call (default 10 s). */
  timeoutMs?: number;
  /** Result text kept (default 16 KiB). */
  maxResultBytes?: number;
  signal?: AbortSignal;
  /** The outbound policy (default: the deployment's). */
  policy?: OutboundPolicy;
  /** The API key of the turn. */
  keyId?: string;
  /** The end user the turn acts for. */
  user?: EndUser;
  /** Sent as `Idempotency-Key` (see ToolContext). */
  idempotencyKey?: string;
  askAgent?: ToolContext['askAgent'];
  pausable?: boolean;
  resume?: ToolContext['resume'];
  authorize?: ToolContext['authorize'];
}

export function toolContext(rt: Runtime, scope: TenantScope, agent: CallingAgent | undefined, options: ToolCallOptions = {}): ToolContext {
  return {
    rt,
    scope,
    agent,
    policy: options.policy ?? rt.outbound,
    timeoutMs: options.timeoutMs ?? 10_000,
    maxResultBytes: options.maxResultBytes ?? 16_384,
    signal: options.signal,
    keyId: options.keyId,
    ...(options.user ? { user: options.user } : {}),
    ...(options.idempotencyKey ? { idempotencyKey: options.idempotencyKey } : {}),
    ...(options.askAgent ? { askAgent: options.askAgent } : {}),
    ...(options.pausable ? { pausable: true } : {}),
    ...(options.resume ? { resume: options.resume } : {}),
    ...(options.authorize ? { authorize: options.authorize } : {}),
  };
}

/** A tool's outcome: what it returned, or the error the model is told about. */
export type ToolOutcome =
  | { ok: true; result: string; sources?: unknown[]; child?: { agentId: string; sessionId: string } }
  | {
      ok: false;
      error: string;
      /** Whether the same call may pass later (the error's own retry category): a workflow step retries it. */
      retryable: boolean;
      /** The tool refused the arguments: a model may correct them, a step's next attempt would not. */
      invalidArguments: boolean;
      /** The call waits for a person (only where the context is pausable): the turn pauses with it. */
      wait?: ToolWait;
    };

function cap(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text);
  if (bytes.length <= maxBytes) return text;
  return `${bytes.subarray(0, maxBytes).toString('utf8').replace(/\uFFFD$/, '')}\n[truncated: ${bytes.length} bytes, ${maxBytes} kept]`;
}

/** Arguments checked against the tool's JSON Schema; one the server cannot check (a remote MCP tool's) is the tool's to check. */
function checkArguments(tool: CallableTool, args: unknown): Record<string, unknown> {
  let schema: z.ZodType;
  try {
    schema = z.fromJSONSchema(tool.parameters);
  } catch {
    return (args ?? {}) as Record<string, unknown>;
  }
  const parsed = schema.safeParse(args ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ToolFailure(`invalid arguments: ${issue.path.join('.') || 'arguments'} ${issue.message}`, { invalidArguments: true });
  }
  return (parsed.data ?? {}) as Record<string, unknown>;
}

/**
 * Runs one call. A tool's failure (bad arguments, a refused or failing URL, a workflow that failed)
 * is an outcome the model is told about, never an exception of the turn; results are capped in
 * size, with a note when cut.
 */
export async function runTool(tool: CallableTool, args: unknown, context: ToolContext, callId?: string): Promise<ToolOutcome> {
  const started = performance.now();
  let outcome: ToolOutcome | undefined;
  try {
    outcome = await inSpan(`execute_tool ${tool.name}`, { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool.name, 'cairn.tool.kind': tool.kind, ...(callId ? { 'gen_ai.tool.call.id': callId } : {}) } }, async (span) => {
      try {
        const reply = await tool.call(checkArguments(tool, args), context);
        if (typeof reply === 'string') return { ok: true, result: cap(reply, context.maxResultBytes) };
        if ('wait' in reply) return { ok: false, error: cap(reply.wait.asks, 2000), retryable: false, invalidArguments: false, wait: reply.wait };
        return { ok: true, result: cap(reply.text, context.maxResultBytes), ...(reply.sources?.length ? { sources: reply.sources } : {}), ...(reply.child ? { child: reply.child } : {}) };
      } catch (error) {
        // An authorization URL that cannot be made (the provider removed meanwhile) leaves the call failed as it is.
        const url = error instanceof AuthorizationRequired && context.authorize ? await context.authorize(error.provider, error.scopes).catch(() => undefined) : undefined;
        if (error instanceof AuthorizationRequired && url) {
          const { provider } = error;
          // The turn waits for the end user to connect; where it cannot wait, the model is given the link to pass on.
          if (context.pausable) return { ok: false, error: `Waiting for the end user to connect their ${provider} account`, retryable: false, invalidArguments: false, wait: { asks: `Connect your ${provider} account`, state: { provider }, actions: [{ type: 'authorization', provider, url }] } };
          return { ok: false, error: `The end user has not connected their ${provider} account: ask them to open ${url} to connect it, then try again`, retryable: false, invalidArguments: false };
        }
        if (!(error instanceof AppError)) throw error;
        // The model is told; the span says the tool failed.
        markFailed(span, error.message.slice(0, 200));
        return { ok: false, error: cap(error.message, 2000), retryable: error.retryable, invalidArguments: error instanceof ToolFailure && error.code === 'INVALID_REQUEST' };
      }
    });
    return outcome;
  } finally {
    // By kind, not name: names are the tenants' own and without bound.
    emitMetrics({ toolKind: tool.kind }, { ToolCalls: { value: 1, unit: 'count' }, ToolErrors: { value: outcome?.ok ? 0 : 1, unit: 'count' }, ToolLatency: { value: performance.now() - started, unit: 'ms' } });
  }
}
