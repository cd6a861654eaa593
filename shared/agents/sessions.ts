import { NotFoundError } from '../errors';
import type { Runtime } from '../runtime';
import type { SessionMessage } from '../store/sessions';
import type { TenantScope } from '../tenancy';
import { agents } from './agents';
import { openVault, restoreTokens } from '../guardrails';

/**
 * A session's messages, oldest first; the agent must exist (else 404). Values the guardrails
 * tokenized are shown as the person gave them (from the session's sealed vault).
 */
export async function listSessionMessages(rt: Runtime, scope: TenantScope, agentId: string, sessionId: string, page: { limit: number; cursor?: string }) {
  await agents.get(rt, scope, agentId);
  const [listed, compaction] = await Promise.all([rt.store.sessions.listMessages(scope, agentId, sessionId, page), rt.store.sessions.getCompaction(scope, agentId, sessionId)]);
  const texts = await restored(rt, scope, agentId, sessionId, [...listed.items.map((m) => m.content), ...(compaction ? [compaction.summary] : [])]);
  const items = listed.items.map((m, i) => ({ ...m, content: texts[i]! }));
  // Every turn is listed; where the session was compacted, turns through `compactedThrough` reach the model as `summary`.
  return { ...listed, items, ...(compaction ? { compaction: { compactedThrough: compaction.through, summary: texts[texts.length - 1]!, summarizedBy: compaction.by, compactedAt: compaction.at } } : {}) };
}

/** A session's messages as the person gave them: values the guardrails tokenized restored from the session's vault. */
export async function shownMessages(rt: Runtime, scope: TenantScope, agentId: string, sessionId: string, messages: SessionMessage[]): Promise<SessionMessage[]> {
  const texts = await restored(rt, scope, agentId, sessionId, messages.map((m) => m.content));
  return messages.map((m, i) => ({ ...m, content: texts[i]! }));
}

/** Texts of a session with the values the guardrails tokenized restored (the vault opened only when one has any). */
async function restored(rt: Runtime, scope: TenantScope, agentId: string, sessionId: string, texts: string[]): Promise<string[]> {
  if (!texts.some((t) => TOKENIZED.test(t))) return texts;
  const vault = await openVault(rt, scope, agentId, sessionId);
  return texts.map((t) => restoreTokens(t, vault));
}

const TOKENIZED = /<[A-Z_]+_\d+>/;

/** An agent's sessions, newest first; the agent must exist (else 404). */
export async function listAgentSessions(rt: Runtime, scope: TenantScope, agentId: string, page: { limit: number; cursor?: string }) {
  await agents.get(rt, scope, agentId);
  return rt.store.sessions.listSessions(scope, agentId, page);
}

/** Deletes a session and its messages; a session with no messages is a 404. */
export async function deleteAgentSession(rt: Runtime, scope: TenantScope, agentId: string, sessionId: string): Promise<void> {
  await agents.get(rt, scope, agentId);
  if ((await rt.store.sessions.deleteSession(scope, agentId, sessionId)) === 0) throw new NotFoundError('session', sessionId);
}
