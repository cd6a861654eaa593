import { z } from '@hono/zod-openapi';
import { restoreTokens, openVault } from '../guardrails';
import { connectionShown, disconnect, listConnections, showConnection } from '../identity';
import { log } from '../log';
import type { Runtime } from '../runtime';
import { memoryOwner } from '../store/memory-graph';
import type { TenantScope } from '../tenancy';

/**
 * A person's data, on request: everything the tenant's agents keep about one end user
 * (`context.userId`) — their sessions with every message (values the guardrails tokenized shown as
 * given) and its feedback, and the memory graph (facts with their history, entities, episodes) —
 * exported whole, or erased whole. Both are logged for audit with counts only; usage and traces keep
 * no personal content to erase.
 */
export { END_USER_ID } from '../identity';

export async function exportEndUser(rt: Runtime, scope: TenantScope, userId: string) {
  const sessions = await rt.store.sessions.sessionsOfUser(scope, userId);
  const withMessages = await Promise.all(
    sessions.map(async ({ agentId, sessionId }) => {
      const messages = await rt.store.sessions.allMessages(scope, agentId, sessionId);
      const vault = messages.some((m) => /<[A-Z_]+_\d+>/.test(m.content)) ? await openVault(rt, scope, agentId, sessionId) : {};
      return { agentId, sessionId, messages: messages.map((m) => ({ ...m, content: restoreTokens(m.content, vault) })) };
    }),
  );
  const memory = await rt.store.memoryGraph.memoryOf(scope, memoryOwner({ userId }).userKey);
  const connections = (await listConnections(rt, scope, userId)).map(showConnection);
  log.info('end user exported', { tenantId: scope.tenantId, audit: 'end-user-export', sessions: sessions.length, memoryItems: memory.length });
  return {
    userId,
    sessions: withMessages,
    connections,
    feedback: withMessages.flatMap((s) => s.messages.flatMap((m) => (m.feedback ? [{ agentId: s.agentId, sessionId: s.sessionId, messageId: m.id, ...m.feedback }] : []))),
    memory: {
      nodes: memory.filter((i) => i.kind === 'node'),
      edges: memory.filter((i) => i.kind === 'edge'),
      episodes: memory.filter((i) => i.kind === 'episode'),
    },
  };
}

/** Erases every session (messages, feedback, token vault, a paused turn) and the whole memory of one end user. */
export async function eraseEndUser(rt: Runtime, scope: TenantScope, userId: string) {
  const sessions = await rt.store.sessions.sessionsOfUser(scope, userId);
  let messages = 0;
  for (const { agentId, sessionId } of sessions) messages += await rt.store.sessions.deleteSession(scope, agentId, sessionId);
  const memoryItems = await rt.store.memoryGraph.deleteMemoryOf(scope, memoryOwner({ userId }).userKey);
  // Their connected accounts too: tokens deleted and revoked at the provider.
  const connections = await listConnections(rt, scope, userId);
  for (const c of connections) await disconnect(rt, scope, userId, c.provider);
  log.info('end user erased', { tenantId: scope.tenantId, audit: 'end-user-erase', sessions: sessions.length, messages, memoryItems, connections: connections.length });
  return { userId, deleted: true as const, removed: { sessions: sessions.length, messages, memoryItems, connections: connections.length } };
}

export const endUserExport = z
  .object({
    userId: z.string(),
    sessions: z.array(z.object({ agentId: z.string(), sessionId: z.string(), messages: z.array(z.record(z.string(), z.unknown())) })),
    connections: z.array(connectionShown).openapi({ description: 'The accounts they connected (providers, scopes, times: never tokens)' }),
    feedback: z.array(z.object({ agentId: z.string(), sessionId: z.string(), messageId: z.string(), rating: z.string(), comment: z.string().optional(), at: z.string() })),
    memory: z.object({ nodes: z.array(z.record(z.string(), z.unknown())), edges: z.array(z.record(z.string(), z.unknown())), episodes: z.array(z.record(z.string(), z.unknown())) }),
  })
  .openapi('EndUserExport');

export const endUserErased = z
  .object({ userId: z.string(), deleted: z.literal(true), removed: z.object({ sessions: z.int(), messages: z.int(), memoryItems: z.int(), connections: z.int() }) })
  .openapi('EndUserErased');
