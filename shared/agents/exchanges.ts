import { NotFoundError, ValidationError } from '../errors';
import type { ToolRound } from '../models/types';
import type { Runtime } from '../runtime';
import type { SessionMessage } from '../store/sessions';
import type { TenantScope } from '../tenancy';
import { agents } from './agents';
import { shownMessages } from './sessions';

/**
 * Stored exchanges as OpenAI's Responses API addresses them (a response is an agent's stored reply
 * in one of its sessions): read back, continued with the caller's tool results, deleted. The
 * session keeps the conversation; an exchange is its question and the reply.
 */
/** A stored reply, as the store keeps it. */
export type StoredReply = SessionMessage;

export interface ExchangeAddress {
  agentId: string;
  sessionId: string;
  replyId: string;
}

/** The stored reply at `address`, as the caller gave it (tokenized values restored), or a 404 naming `id`. */
export async function storedReply(rt: Runtime, scope: TenantScope, address: ExchangeAddress, id: string): Promise<SessionMessage> {
  await agents.get(rt, scope, address.agentId);
  const reply = await rt.store.sessions.getMessage(scope, address.agentId, address.sessionId, address.replyId);
  if (!reply || reply.role !== 'assistant') throw new NotFoundError('response', id);
  return (await shownMessages(rt, scope, address.agentId, address.sessionId, [reply]))[0]!;
}

/** Whether the session has stored turns (a response given with `store: false` left none). */
export async function sessionHasTurns(rt: Runtime, scope: TenantScope, agentId: string, sessionId: string): Promise<boolean> {
  return (await rt.store.sessions.recentMessages(scope, agentId, sessionId, 1)).length > 0;
}

/**
 * What continues an exchange whose reply handed calls to the caller: its question and the tool
 * rounds so far — the agent's own calls on the way (one round each, with what they returned), then
 * the caller's calls with the caller's results. Every call must be answered, and only those calls.
 */
export async function continuedExchange(
  rt: Runtime,
  scope: TenantScope,
  address: ExchangeAddress,
  results: Array<{ callId: string; output: string; field: string }>,
): Promise<{ question: SessionMessage; rounds: ToolRound[] }> {
  const reply = await rt.store.sessions.getMessage(scope, address.agentId, address.sessionId, address.replyId);
  const calls = reply?.clientToolCalls ?? [];
  for (const result of results) {
    if (!calls.some((c) => c.id === result.callId)) throw new ValidationError(result.field, `names no function_call of the previous response${calls.length ? ` (it called ${calls.map((c) => c.id).join(', ')})` : ': it called none'}`);
  }
  const unanswered = calls.filter((c) => !results.some((r) => r.callId === c.id));
  if (unanswered.length > 0) throw new ValidationError('input', `needs a function_call_output for each function_call of the previous response (${unanswered.map((c) => c.id).join(', ')} missing)`);
  const question = await rt.store.sessions.messageBefore(scope, address.agentId, address.sessionId, address.replyId);
  if (!question || question.role !== 'user') throw new ValidationError('previous_response_id', 'names a response whose question is no longer stored');
  const own = (reply!.toolCalls ?? []) as Array<{ id: string; tool: string; arguments?: Record<string, unknown>; result?: string; error?: string }>;
  const rounds: ToolRound[] = [
    ...own.map((c) => ({ calls: [{ id: c.id, name: c.tool, arguments: c.arguments }], results: [{ id: c.id, name: c.tool, content: c.result ?? c.error ?? '', isError: c.error !== undefined }] })),
    { calls, results: calls.map((c) => ({ id: c.id, name: c.name, content: results.find((r) => r.callId === c.id)!.output, isError: false })) },
  ];
  return { question, rounds };
}

/**
 * Deletes a stored reply, and its question unless another reply answers it too (a reply that
 * continued the exchange with the caller's tool results shares the question).
 */
export async function deleteExchange(rt: Runtime, scope: TenantScope, address: ExchangeAddress, id: string): Promise<void> {
  await storedReply(rt, scope, address, id);
  const { agentId, sessionId, replyId } = address;
  const [question, next] = await Promise.all([rt.store.sessions.messageBefore(scope, agentId, sessionId, replyId), rt.store.sessions.messageAfter(scope, agentId, sessionId, replyId)]);
  // The question is this reply's alone when the reply follows it directly and no reply follows the reply.
  const firstReply = question?.role === 'user' ? await rt.store.sessions.messageAfter(scope, agentId, sessionId, question.id) : undefined;
  const ownsQuestion = firstReply?.id === replyId && next?.role !== 'assistant';
  await rt.store.sessions.deleteMessages(scope, agentId, sessionId, [replyId, ...(ownsQuestion ? [question!.id] : [])]);
}
