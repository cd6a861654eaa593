import { NotFoundError } from '../errors';
import type { Runtime } from '../runtime';
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
  if (!listed.items.some((m) => TOKENIZED.test(m.content))) return listed;
  const vault = await openVault(rt, scope, agentId, sessionId);
  return { ...listed, items: listed.items.map((m) => ({ ...m, content: restoreTokens(m.content, vault) })) };
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
