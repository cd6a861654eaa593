import { config } from '../config';
import { errorFields, log } from '../log';
import type { ResolvedModel } from '../models/types';
import { extractMemory, type Extraction } from '../memory/extract';
import { extractWithModel } from '../memory/llm-extract';
import { episodeWrites, recordEpisode, type Turn } from '../memory/record-episode';
import type { WriteRequest } from '../store/batch';
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

/**
 * The memory of a finished turn, for the turn's end to store. The rules extract at once (the
 * built-in engine), so their puts go out in the same batch as the exchange, and `finish` makes
 * the updates; a model's extraction is a call the stored exchange is not kept waiting on, so it
 * all happens in `finish`, after. Either way a memory failure is logged, never the turn's.
 */
export async function turnMemory(rt: Runtime, scope: TenantScope, turn: Turn, resolved: ResolvedModel, options: { newOwner: boolean }): Promise<{ puts: WriteRequest[]; finish: () => Promise<void> }> {
  if (resolved.engine.provider !== 'local') return { puts: [], finish: () => rememberTurn(rt, scope, turn, resolved) };
  const failed = (error: unknown) => log.error('memory not recorded', { tenantId: scope.tenantId, agentId: turn.agentId, sessionId: turn.sessionId, ...errorFields(error) });
  try {
    const { puts, update } = await episodeWrites(rt, scope, turn, extractMemory(turn.text), options);
    return { puts, finish: () => update().catch(failed) };
  } catch (error) {
    failed(error);
    return { puts: [], finish: async () => undefined };
  }
}
