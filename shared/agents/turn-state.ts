import type { ChatMessage, ChatRequest, ChatResult, ResolvedModel, ResponseFormat, ToolCall, ToolRound, ToolSpec } from '../models/types';
import type { Agent } from './agent-schema';
import type { TokenBudget } from '../usage';
import type { CallableTool } from './agent-tools';

/** The shapes of a conversation turn, shared by the turn itself (conversation.ts) and its tool use (turn-tools.ts). */

export interface ConverseSource {
  knowledgeSourceId: string;
  documentId: string;
  path?: string;
  rowKey?: string;
  chunkId: string;
  score: number;
  snippet: string;
  location?: { page?: number; pageEnd?: number; slide?: number; sheet?: string };
}

/** A tool call of a turn, as stored and answered: what was asked, what came back, how long it took. */
export interface ToolCallRecord {
  id: string;
  tool: string;
  arguments: Record<string, unknown> | undefined;
  result?: string;
  error?: string;
  durationMs: number;
}

/** What a streamed turn yields: the reply's text as it comes, and its tool calls as they happen. */
export type TurnEvent = { type: 'delta'; text: string } | { type: 'tool_call'; call: Omit<ToolCallRecord, 'result' | 'error' | 'durationMs'> } | { type: 'tool_result'; call: ToolCallRecord };

export interface PreparedConversation {
  agent: Agent;
  /** What the model may call this turn (the agent's tools, expanded: one per operation or MCP tool). */
  tools: CallableTool[];
  /** Names of the caller's own tools: calls to them go back to the caller. */
  clientTools: Set<string>;
  sessionId: string;
  resolved: ResolvedModel;
  request: ChatRequest;
  sources: ConverseSource[];
  skipped: Array<{ knowledgeSourceId: string; status: string }>;
  /** Whether turns are stored (Cairn sessions) or the caller keeps the history (OpenAI-style). */
  persist: boolean;
  /** When the user's turn arrived (its id sorts before the reply's). */
  receivedAt: number;
  /** Whose memory the turn adds to (else the session's own). */
  userId?: string;
  /** The API key that asked, for usage accounting. */
  keyId?: string;
  /** The tenant's token budget before the turn, when its model is bound to one. */
  budget?: TokenBudget;
}

/**
 * A turn: either of a Cairn session (`sessionId` continues one, `userId` gives the agent its memory
 * of the user) or, with `history`, of a conversation the caller keeps (OpenAI-style: nothing is
 * stored; `instructions` add to the agent's own).
 */
export interface ConverseInput {
  message: string;
  sessionId?: string;
  userId?: string;
  history?: ChatMessage[];
  instructions?: string;
  /** Sampling settings of this turn, over the agent's own (the OpenAI-compatible surface sends them). */
  settings?: { temperature?: number; maxTokens?: number; topP?: number; stop?: string[] };
  /** Resumes the session's paused turn with a person's decision on each pending call (no message then). */
  toolApprovals?: ToolApproval[];
  /**
   * The caller's own tools (OpenAI-style `tools`): a call to one ends the turn and goes back to
   * the caller, who runs it and sends the result as a later round (`toolRounds`).
   */
  clientTools?: ToolSpec[];
  toolRounds?: ToolRound[];
  toolChoice?: 'none' | 'required' | { name: string };
  /** The reply must be JSON of this format (checked, one repair asked for, else 502). */
  responseFormat?: ResponseFormat;
  /** The API key that asked, for usage accounting. */
  keyId?: string;
  /** The tenant's token budget before the turn, when its model is bound to one. */
  budget?: TokenBudget;
}

export interface ToolApproval {
  id: string;
  approved: boolean;
  reason?: string;
}

/** How far a turn got: its tool calls, the tokens used and the model steps taken. */
export interface Progress {
  toolCalls: ToolCallRecord[];
  usage: ChatResult['usage'];
  step: number;
  /** Model calls made (a step, and a structured reply's repair, each make one). */
  modelCalls?: number;
  /** Searches the turn made (grounding, knowledge_search calls) and their read units: SearchWork. */
  searches: number;
  readUnits: number;
  /** What usage accounting already counted (when the turn paused): a resumed turn counts the rest. */
  billed?: { inputTokens: number; outputTokens: number; toolCalls: number; modelCalls: number; searches?: number; readUnits?: number };
}

/** A turn waiting for a person: everything needed to continue it, from any instance. */
export interface PausedState {
  keyId?: string;
  request: ChatRequest;
  sources: ConverseSource[];
  receivedAt: number;
  userId?: string;
  pendingCalls: ToolCall[];
  progress: Progress;
}
