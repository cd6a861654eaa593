import { ValidationError } from '../../shared/errors';
import type { ToolRound } from '../../shared/models/types';

/** What chat completions and the Responses API read alike from a caller's conversation. */

/** The text of a message's content: a string, or the text of its parts. */
export const textOf = (content: string | Array<{ text?: string }> | null | undefined) => (typeof content === 'string' ? content : (content ?? []).map((p) => p.text ?? '').join(''));

/** Adds the caller's result of a call to the latest round; false when that round has no such call. */
export function addResult(rounds: ToolRound[], callId: string | undefined, output: unknown): boolean {
  const round = rounds[rounds.length - 1];
  const call = round?.calls.find((c) => c.id === callId);
  if (!round || !call) return false;
  round.results.push({ id: call.id, name: call.name, content: typeof output === 'string' ? output : JSON.stringify(output ?? ''), isError: false });
  return true;
}

/** Refuses rounds with a call the caller sent no result for, naming `field`. */
export function assertAnswered(rounds: ToolRound[], field: string, needs: string): void {
  for (const round of rounds) {
    const missing = round.calls.filter((c) => !round.results.some((r) => r.id === c.id));
    if (missing.length > 0) throw new ValidationError(field, `${needs} (${missing.map((c) => c.id).join(', ')} missing)`);
  }
}
