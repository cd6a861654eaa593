import { createHash } from 'node:crypto';
import { config } from '../config';
import { digestId } from '../ids';
import { errorFields, log } from '../log';
import { extractMemory, type Extraction } from '../memory/extract';
import { extractWithModel } from '../memory/llm-extract';
import { episodeWrites, recordEpisode, type Turn } from '../memory/record-episode';
import type { MemoryMessage } from '../queue/messages';
import type { Delivery } from '../queue/queue';
import type { Runtime } from '../runtime';
import type { WriteRequest } from '../store/batch';
import { memoryOwner } from '../store/memory-graph';
import { inSpan, SpanKind } from '../telemetry';
import { scopeOf, type TenantScope } from '../tenancy';
import { recordUsage, resolveForTenant, tallied, type ModelTallies } from '../usage';
import type { Agent } from './agent-schema';

/**
 * What an agent remembers of its turns, as its `memory` setting says: `off` nothing; `rules` the
 * built-in extraction, deterministic and free, stored in the same batch as the exchange; `model`
 * an extraction by a model, which is work on the steps queue after the turn has answered — never
 * a second call the caller waits for. A later turn may start before the extraction of the one
 * before it has finished: recall is then at most one turn behind.
 */
export type MemoryMode = 'off' | 'rules' | 'model';


/** A model call's time limit, from its start. */
export function modelDeadline(): AbortSignal {
  return AbortSignal.timeout(config.modelTimeoutMs);
}

/** What a queued extraction needs beside the turn: the stored reply's id (once-only), who asked, which release. */
export interface QueuedExtraction {
  messageId: string;
  keyId?: string;
  release: number | 'draft';
}

/**
 * The memory of a finished turn, for the turn's end to store: puts that go in the exchange's batch
 * and `finish`, what follows it (the rules' updates, or sending the model's extraction). A failure
 * is logged, never turned into a failed turn.
 */
export async function turnMemory(rt: Runtime, scope: TenantScope, turn: Turn, agent: Pick<Agent, 'memory' | 'model'>, options: { newOwner: boolean; queued: QueuedExtraction }): Promise<{ puts: WriteRequest[]; finish: () => Promise<void> }> {
  const failed = (error: unknown) => log.error('memory not recorded', { tenantId: scope.tenantId, agentId: turn.agentId, sessionId: turn.sessionId, ...errorFields(error) });
  const setting = agent.memory;
  if (setting.mode === 'off') return { puts: [], finish: async () => undefined };
  if (setting.mode === 'model') {
    const message: MemoryMessage = {
      type: 'memory',
      tenantId: scope.tenantId,
      agentId: turn.agentId,
      sessionId: turn.sessionId,
      ...(turn.userId ? { userId: turn.userId } : {}),
      messageId: options.queued.messageId,
      text: turn.text.slice(0, MAX_EXTRACTED_CHARS),
      reply: turn.reply.slice(0, MAX_REPLY_CHARS),
      at: turn.at.getTime(),
      model: setting.model ?? agent.model,
      ...(options.queued.keyId ? { keyId: options.queued.keyId } : {}),
      release: options.queued.release,
    };
    return { puts: [], finish: () => rt.queues.workflowSteps.send([message]).catch(failed) };
  }
  try {
    const { puts, episodePut, update } = await episodeWrites(rt, scope, turn, extractMemory(turn.text), options);
    return { puts: [...puts, ...episodePut], finish: () => update().catch(failed) };
  } catch (error) {
    failed(error);
    return { puts: [], finish: async () => undefined };
  }
}

/** What a model is given of a message to extract from, and of the reply the episode keeps. */
const MAX_EXTRACTED_CHARS = 8000;
const MAX_REPLY_CHARS = 2000;

/** The episode an exchange's extraction records: one per stored reply, so a redelivery finds it. */
export const episodeIdOf = (messageId: string) => digestId('episode', createHash('sha256').update(messageId).digest());

/**
 * The steps worker's part: extract the exchange's memory with the model and record it, once. A
 * recorded episode means a delivery before this one finished; a model that fails may pass next
 * time (the queue retries), and on the last delivery the rules extract instead. Its tokens are
 * the agent's usage under the operation `memory`, and its token budget counts them.
 */
export function consumeMemoryMessage(rt: Runtime, message: MemoryMessage, delivery: Delivery): Promise<void> {
  // In the trace of the turn that sent it: its span (and the model call's under it) join the turn's.
  return inSpan('agent.memory', { kind: SpanKind.CONSUMER, attributes: { 'cairn.tenant.id': message.tenantId, 'cairn.agent.id': message.agentId, 'cairn.memory.model': message.model, 'cairn.delivery': delivery.receiveCount } }, () => extractQueued(rt, message, delivery));
}

async function extractQueued(rt: Runtime, message: MemoryMessage, delivery: Delivery): Promise<void> {
  const scope = scopeOf(message.tenantId);
  const episodeId = episodeIdOf(message.messageId);
  const owner = memoryOwner({ userId: message.userId, sessionId: message.sessionId });
  if (await rt.store.memoryGraph.getMemoryItem(scope, owner.userKey, message.agentId, 'episode', episodeId)) return;
  const turn: Turn = { agentId: message.agentId, sessionId: message.sessionId, userId: message.userId, text: message.text, reply: message.reply, at: new Date(message.at) };
  const models: ModelTallies = {};
  let extraction: Extraction;
  try {
    const resolved = tallied(await resolveForTenant(rt, scope, message.model, [], message.keyId), () => models);
    extraction = await extractWithModel(resolved, message.text, modelDeadline(), rt.clock.now());
  } catch (error) {
    if (delivery.receiveCount < delivery.maxReceives) throw error;
    log.warn('model memory extraction failed on its last delivery; using the rules', { model: message.model, ...errorFields(error) });
    extraction = extractMemory(message.text);
  } finally {
    const subject = { kind: 'agent' as const, id: message.agentId };
    // Counted per delivery: a failed attempt used tokens too.
    await Promise.all(Object.entries(models).map(([model, used]) => recordUsage(rt, scope, { keyId: message.keyId, subject, release: message.release, operation: 'memory', model, ...used })));
  }
  await recordEpisode(rt, scope, turn, extraction, { episodeId });
}
