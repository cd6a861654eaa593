import { config } from '../config';
import { errorFields, log } from '../log';
import type { ResolvedModel } from '../models/types';
import { extractMemory, type Extraction } from '../memory/extract';
import { extractWithModel } from '../memory/llm-extract';
import { recordEpisode, type Turn } from '../memory/record-episode';
import type { Runtime } from '../runtime';
import type { TenantScope } from '../tenancy';

/** A model call's time limit, from its start. */
export function modelDeadline(): AbortSignal {
  return AbortSignal.timeout(config.modelTimeoutMs);
}

/** With a real provider configured, the model extracts memory; the rules when it cannot. */
async function extractionOf(text: string, resolved: ResolvedModel): Promise<Extraction> {
  if (resolved.engine.provider === 'local') return extractMemory(text);
  try {
    return await extractWithModel(resolved, text, modelDeadline());
  } catch (error) {
    log.warn('model memory extraction failed; using the rules', { model: resolved.name, ...errorFields(error) });
    return extractMemory(text);
  }
}

/**
 * Adds a finished turn to the memory graph. The conversation is already stored and answered: a
 * memory failure is logged, never turned into a failed turn.
 */
export async function rememberTurn(rt: Runtime, scope: TenantScope, turn: Turn, resolved: ResolvedModel): Promise<void> {
  try {
    await recordEpisode(rt, scope, turn, await extractionOf(turn.text, resolved));
  } catch (error) {
    log.error('memory not recorded', { tenantId: scope.tenantId, agentId: turn.agentId, sessionId: turn.sessionId, ...errorFields(error) });
  }
}
