import { isoNow } from '../clock';
import { NotFoundError } from '../errors';
import { openVault, saveVault } from '../guardrails';
import { newId } from '../ids';
import type { Runtime } from '../runtime';
import { memoryOwner } from '../store/memory-graph';
import type { TenantScope } from '../tenancy';
import { agents } from './agents';

export interface ForkedSession {
  sessionId: string;
  forkedFrom: { sessionId: string; messageId: string };
  /** Messages the new session starts with. */
  messages: number;
}

/**
 * A new session holding a session's history up to and including one message, so a conversation
 * can go another way from there while the original stays as it is. What belongs to the session
 * goes with it, bound to the new one: the guardrails' vault is sealed again under the new session,
 * a summary of turns it still has is kept, and an anonymous session's memory (what the agent
 * learnt in it up to that message) is copied; a named user's memory is the user's, shared already.
 * Ratings stay with the original's replies.
 */
export async function forkSession(rt: Runtime, scope: TenantScope, agentId: string, sessionId: string, atMessageId: string): Promise<ForkedSession> {
  await agents.get(rt, scope, agentId);
  const at = await rt.store.sessions.getMessage(scope, agentId, sessionId, atMessageId);
  if (!at) throw new NotFoundError('message', atMessageId);
  const copy = await copySession(rt, scope, agentId, sessionId, { through: atMessageId, until: at.createdAt });
  return { ...copy, forkedFrom: { sessionId, messageId: atMessageId } };
}

/**
 * A new session with the messages of one up to `through` (or those before `before`), what it
 * learnt until `until` (an ISO time), and its vault and summary.
 */
export async function copySession(rt: Runtime, scope: TenantScope, agentId: string, sessionId: string, upTo: { through?: string; before?: string; until: string }): Promise<{ sessionId: string; messages: number }> {
  const within = (id: string) => (upTo.through !== undefined ? id <= upTo.through : id < upTo.before!);
  const [all, session, vault, compaction] = await Promise.all([
    rt.store.sessions.allMessages(scope, agentId, sessionId),
    rt.store.sessions.getSession(scope, agentId, sessionId),
    openVault(rt, scope, agentId, sessionId),
    rt.store.sessions.getCompaction(scope, agentId, sessionId),
  ]);
  const messages = all.filter((m) => within(m.id)).map(({ feedback: _feedback, ...m }) => m);
  const forkId = newId('session', rt.clock.now());
  const userId = session?.userId;
  await rt.store.writeBatch([
    ...rt.store.sessions.messageWrites(scope, agentId, forkId, messages),
    rt.store.sessions.openingWrite(scope, { agentId, sessionId: forkId, ...(userId ? { userId } : {}), at: isoNow(rt.clock), messages: messages.length }),
  ]);
  if (Object.keys(vault).length > 0) await saveVault(rt, scope, agentId, forkId, vault);
  if (compaction && within(compaction.through)) await rt.store.sessions.putCompaction(scope, agentId, forkId, compaction);
  if (!userId) {
    await rt.store.memoryGraph.copyMemory(scope, memoryOwner({ sessionId }).userKey, memoryOwner({ sessionId: forkId }).userKey, agentId, (item) =>
      (item.kind === 'episode' ? item.at : item.createdAt) > upTo.until ? undefined : { ...item, sessionId: forkId },
    );
  }
  return { sessionId: forkId, messages: messages.length };
}
