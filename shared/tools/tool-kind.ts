import type { PolicyRule } from './tool-policy';
import type { OutboundPolicy } from '../net/outbound';
import type { Runtime } from '../runtime';
import type { TenantScope } from '../tenancy';
import type { EndUser } from '../identity';
import type { StoredTool } from './definitions';

/**
 * What one kind of agent tool (http, openapi, mcp, knowledge_search, workflow) does (its definition is
 * in `definitions.ts`): how a definition is made ready to store (an OpenAPI document read into
 * operations), and the tools it gives the model (one, or one per operation / MCP tool). Adding a kind
 * adds a file beside this one and a line in `index.ts`.
 */
export interface ToolKind<Input, Stored> {
  readonly type: string;
  /** The definition as stored (secrets sealed elsewhere, before this); `at` names it in errors (`tools[2]`). */
  prepare?(rt: Runtime, scope: TenantScope, tool: Input, at: string, options: { policy: OutboundPolicy }): Promise<Stored>;
  /** What responses show of a stored definition, where it is not the definition itself (its auth is shown after). */
  present?(tool: Stored): unknown;
  /** What the model may call; `context` is the turn's. */
  expose(tool: Stored, context: ToolContext): Promise<ExposedTool[]> | ExposedTool[];
}

/** What tools read of the agent whose turn calls them (an agent record is one). */
export interface CallingAgent {
  readonly id: string;
  readonly tools?: readonly StoredTool[];
  readonly knowledgeSourceIds: readonly string[];
}

/** What a tool call reads: who calls, under which limits. */
export interface ToolContext {
  rt: Runtime;
  scope: TenantScope;
  /** The agent whose turn calls; none when a workflow step calls the tool. */
  agent?: CallingAgent;
  policy: OutboundPolicy;
  /** Per call. */
  timeoutMs: number;
  /** Result bytes kept. */
  maxResultBytes: number;
  signal?: AbortSignal;
  /** The API key of the turn, for usage accounting of what the tool runs (a workflow). */
  keyId?: string;
  /** The end user the turn acts for (what a workflow it starts, or a search it makes, is for). */
  user?: EndUser;
  /**
   * The same on every attempt of one call (a background run's call retried after a crash): sent as
   * the `Idempotency-Key` header, so the service called can do it once.
   */
  idempotencyKey?: string;
  /** Asks another agent (`agt_…[:release]`) from this turn: what an `agent` tool calls (the turn supplies it). */
  askAgent?: (address: string, request: { message: string; context?: string }, resume?: ToolResume) => Promise<ToolReply>;
  /** The turn can pause for a person: a call that must wait for one (an asked agent's approval, a remote task's input) may answer `{wait}`. */
  pausable?: boolean;
  /** The call goes on after a person's decision on what it waited for (`state`: what its `wait` kept). */
  resume?: ToolResume;
  /**
   * Where the end user connects their account at an OAuth provider, for a call that needs it:
   * an authorization URL bound to what waits (the turn supplies it when it has an end user and
   * knows where the provider sends them back).
   */
  authorize?: (provider: string, scopes?: string[]) => Promise<string>;
}

/** What a person must do before a waiting call can go on, beyond deciding on it: connect an account. */
export interface RequiredAction {
  type: 'authorization';
  provider: string;
  url: string;
}

/** What a call that waits for a person asks, and what it keeps to go on from (never secrets: it is stored with the turn). */
export interface ToolWait {
  asks: string;
  state: Record<string, unknown>;
  /** What the person must do before deciding (connect an account): approving the call then means it is done. */
  actions?: RequiredAction[];
}

/** A person's decision on what a waiting call asked, and the state it kept. */
export interface ToolResume {
  state: Record<string, unknown>;
  approval: { approved: boolean; reason?: string };
}

/**
 * What a tool call returns: its text, or its text with the passages it stands on (an agent tool's
 * reply cites its own sources, numbered [1]… in the text: the calling turn renumbers them into its
 * own), and the child session it ran in.
 */
export type ToolReply = string | { text: string; sources?: unknown[]; child?: { agentId: string; sessionId: string } } | { wait: ToolWait };

/** One tool as the model sees it, and how a call of it runs (its arguments already checked against `parameters`). */
export interface CallableTool {
  /** The definition's type (http, openapi, mcp, …): metrics count calls by it. */
  kind: string;
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  requireApproval: boolean;
  /** Rules on each call by what it asks (first match wins). */
  policy?: PolicyRule[];
  call(args: Record<string, unknown>, context: ToolContext): Promise<ToolReply>;
}

/** A tool as its kind exposes it (the registry adds the kind). */
export type ExposedTool = Omit<CallableTool, 'kind'>;

/**
 * A name the model is given for an operation of a document or server: `<tool>_<operation>`, only
 * the characters models accept, at most 64.
 */
export function exposedName(prefix: string, operation: string): string {
  return `${prefix}_${operation.replace(/[^A-Za-z0-9_-]+/g, '_')}`.slice(0, 64);
}

