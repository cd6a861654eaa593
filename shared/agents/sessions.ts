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
  const listed = await rt.store.sessions.listMessages(scope, agentId, sessionId, page);
  return { ...listed, items: await shownMessages(rt, scope, agentId, sessionId, listed.items) };
}

/** A session's messages as the person gave them: values the guardrails tokenized restored from the session's vault. */
export async function shownMessages(rt: Runtime, scope: TenantScope, agentId: string, sessionId: string, messages: SessionMessage[]): Promise<SessionMessage[]> {
  if (!messages.some((m) => TOKENIZED.test(m.content))) return messages;
  const vault = await openVault(rt, scope, agentId, sessionId);
  return messages.map((m) => ({ ...m, content: restoreTokens(m.content, vault) }));
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
