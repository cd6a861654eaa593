import { errorFields, log } from '../log';
import { contextWindowOf, extractiveSummary, WINDOW_SHARE, windowTokens } from '../models/context-window';
import type { ChatMessage, ResolvedModel } from '../models/types';
import type { Runtime } from '../runtime';
import type { SessionCompaction, SessionMessage } from '../store/sessions';
import type { TenantScope } from '../tenancy';

/**
 * Long sessions never fail for length. A turn reads the session's summary (when it has one) and the
 * turns after it; once those pass COMPACT_PAST messages, or half of what the model's window leaves
 * the conversation, the older of them are folded into a new summary — the agent's model writes it,
 * the built-in engine writes an extractive one — stored with the session and given to every later
 * turn in their place. So a session's prompt stays flat however long it runs, and the messages API
 * still lists every turn (with where the summary ends).
 */

/** The most turns a turn reads: past these, older turns are in the summary or (a session from before summaries) left out. */
export const LOADED_MESSAGES = 42;
/** Turns after the summary past which the older of them are compacted. */
const COMPACT_PAST = 40;
/** Turns kept whole when the older ones are compacted. */
const KEEP_MESSAGES = 10;
/** The conversation's share of what the window leaves for input (the rest: instructions, grounding, tools, rounds). */
const HISTORY_SHARE = 0.5;
/** A summary's length bound (tokens; the model's in characters): a prompt stays flat only if its summary does. */
const SUMMARY_TOKENS = 1_500;
const SUMMARY_CHARS = SUMMARY_TOKENS * 4;

export interface SessionHistory {
  /** Turns after the summary (all the turns read, without one), oldest first. */
  messages: SessionMessage[];
  compaction?: SessionCompaction;
}

/** The session's summary and the turns after it. */
export async function sessionHistory(rt: Runtime, scope: TenantScope, agentId: string, sessionId: string): Promise<SessionHistory> {
  const [messages, compaction] = await Promise.all([
    rt.store.sessions.recentMessages(scope, agentId, sessionId, LOADED_MESSAGES),
    rt.store.sessions.getCompaction(scope, agentId, sessionId),
  ]);
  return { messages: compaction ? messages.filter((m) => m.id > compaction.through) : messages, ...(compaction ? { compaction } : {}) };
}

const SUMMARY_INSTRUCTIONS =
  'You keep the running summary of a conversation between a user and an assistant, for the assistant to continue it without the older turns. ' +
  'Write the new summary: the earlier summary (when there is one) brought up to date with the turns given. Keep what the user asked for, told about themselves and their situation, ' +
  'what was decided or answered, names, numbers and dates, and what is still open. Plain sentences, no preamble, at most 250 words.';

const transcript = (messages: ChatMessage[]) => messages.map((m) => `${m.role === 'user' ? 'User' : 'Assistant'}: ${m.content}`).join('\n\n');

/** The new summary: the model's, or (the built-in engine, or a model that failed) the extractive one. */
async function summarize(model: ResolvedModel, earlier: string | undefined, turns: ChatMessage[], now: number, signal: AbortSignal): Promise<{ summary: string; by: string }> {
  const extractive = () => ({ summary: extractiveSummary(turns, SUMMARY_TOKENS, earlier), by: 'extractive' });
  if (model.engine.provider === 'local') return extractive();
  try {
    const result = await model.engine.generate(
      {
        model: model.model,
        instructions: SUMMARY_INSTRUCTIONS,
        messages: [{ role: 'user', content: `${earlier ? `Earlier summary:\n${earlier}\n\n` : ''}Turns to add:\n${transcript(turns)}` }],
        temperature: 0,
        maxTokens: 600,
        now,
      },
      signal,
    );
    const summary = result.text.trim().slice(0, SUMMARY_CHARS);
    return summary ? { summary, by: result.model ?? model.name } : extractive();
  } catch (error) {
    log.warn('session summary by the model failed: the extractive one is used', { model: model.name, ...errorFields(error) });
    return extractive();
  }
}

/** Where older turns may be cut off: the kept turns start with a user's message, so the model sees whole exchanges. */
function keptFrom(messages: SessionMessage[]): number {
  let at = Math.max(0, messages.length - KEEP_MESSAGES);
  while (at > 0 && messages[at]!.role !== 'user') at--;
  return at;
}

/**
 * The history as the turn gives it to the model: compacted first when it has grown past its share
 * (the new summary stored for later turns), else as read.
 */
export async function compactedHistory(
  rt: Runtime,
  scope: TenantScope,
  at: { agentId: string; sessionId: string },
  history: SessionHistory,
  model: ResolvedModel,
  signal: AbortSignal,
): Promise<SessionHistory> {
  const budget = contextWindowOf(model) * WINDOW_SHARE * HISTORY_SHARE;
  const tokens = windowTokens(history.compaction?.summary ?? '') + history.messages.reduce((sum, m) => sum + windowTokens(m.content), 0);
  if (history.messages.length <= COMPACT_PAST && tokens <= budget) return history;
  const cut = keptFrom(history.messages);
  if (cut === 0) return history;
  const older = history.messages.slice(0, cut);
  const { summary, by } = await summarize(model, history.compaction?.summary, older, rt.clock.now(), signal);
  const compaction: SessionCompaction = { through: older[older.length - 1]!.id, summary, by, at: new Date(rt.clock.now()).toISOString() };
  await rt.store.sessions.putCompaction(scope, at.agentId, at.sessionId, compaction);
  log.info('session compacted', { agentId: at.agentId, sessionId: at.sessionId, messages: older.length, by, summaryChars: summary.length });
  return { messages: history.messages.slice(cut), compaction };
}
