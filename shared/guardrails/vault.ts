import type { Runtime } from '../runtime';
import type { SealedSecret } from '../secrets/secret-box';
import type { TenantScope } from '../tenancy';

/**
 * A session's token vault (token → the person's value), sealed like every other stored secret and
 * bound to its tenant, agent and session: the messages keep tokens, the vault keeps the values.
 */
const contextOf = (scope: TenantScope, agentId: string, sessionId: string) => ({ tenant: scope.tenantId, agent: agentId, session: sessionId, purpose: 'guardrails-vault' });

export async function openVault(rt: Runtime, scope: TenantScope, agentId: string, sessionId: string): Promise<Record<string, string>> {
  const sealed = (await rt.store.sessions.getVault(scope, agentId, sessionId)) as SealedSecret | undefined;
  if (!sealed) return {};
  return JSON.parse(await rt.secrets.open(sealed, contextOf(scope, agentId, sessionId))) as Record<string, string>;
}

export async function saveVault(rt: Runtime, scope: TenantScope, agentId: string, sessionId: string, vault: Record<string, string>): Promise<void> {
  await rt.store.sessions.putVault(scope, agentId, sessionId, await rt.secrets.seal(JSON.stringify(vault), contextOf(scope, agentId, sessionId)));
}

const TOKEN = /<[A-Z_]+_\d+>/g;

/** Text with a vault's tokens put back (what the person said, as they said it). */
export function restoreTokens(text: string, vault: Record<string, string>): string {
  return text.replace(TOKEN, (token) => vault[token] ?? token);
}
