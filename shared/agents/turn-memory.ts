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

/** A configured model extracts memory; the rules when it cannot. */
async function modelExtraction(text: string, resolved: ResolvedModel, now: number): Promise<Extraction> {
  try {
    return await extractWithModel(resolved, text, modelDeadline(), now);
  } catch (error) {
    log.warn('model memory extraction failed; using the rules', { model: resolved.name, ...errorFields(error) });
    return extractMemory(text);
  }
}

/**
 * The memory of a finished turn, for the turn's end to store. The rules extract at once (the
 * built-in engine), so their puts go out in the same batch as the exchange, and `finish` makes
 * the updates; a model's extraction is a call the stored exchange is not kept waiting on, so it
 * all happens in `finish`, after. The conversation is stored and answered either way: a memory
 * failure is logged, never turned into a failed turn.
 */
export async function turnMemory(rt: Runtime, scope: TenantScope, turn: Turn, resolved: ResolvedModel, options: { newOwner: boolean }): Promise<{ puts: WriteRequest[]; finish: () => Promise<void> }> {
  const failed = (error: unknown) => log.error('memory not recorded', { tenantId: scope.tenantId, agentId: turn.agentId, sessionId: turn.sessionId, ...errorFields(error) });
  if (resolved.engine.provider !== 'local') {
    const finish = async () => {
      try {
        await recordEpisode(rt, scope, turn, await modelExtraction(turn.text, resolved, rt.clock.now()));
      } catch (error) {
        failed(error);
      }
    };
    return { puts: [], finish };
  }
  try {
    const { puts, update } = await episodeWrites(rt, scope, turn, extractMemory(turn.text), options);
    return { puts, finish: () => update().catch(failed) };
  } catch (error) {
    failed(error);
    return { puts: [], finish: async () => undefined };
  }
}
