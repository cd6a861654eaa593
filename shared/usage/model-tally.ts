import { z } from 'zod';
import { AppError } from '../errors';
import { aroundEachCall } from '../models/around-each-call';
import type { ChatResult, FailedAttempt, ResolvedModel } from '../models/types';

/**
 * What each model did for a piece of work (a turn, a step): its tokens, its calls, its failed
 * calls. A chain's failed attempts are counted against the models that failed, and the tokens
 * against the one that answered, so usage shows each model's part.
 */
export const modelTally = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cachedInputTokens: z.number().default(0),
  cacheWriteTokens: z.number().default(0),
  requests: z.number(),
  failedRequests: z.number().default(0),
});
export type ModelTally = z.infer<typeof modelTally>;
export type ModelTallies = Record<string, ModelTally>;

const empty = (): ModelTally => ({ inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, requests: 0, failedRequests: 0 });

/** The attempts that failed (not those skipped) before a call's answer, or in a call that failed. */
function failedOf(primary: string, result: ChatResult | undefined, error: unknown): FailedAttempt[] {
  if (result) return result.failedAttempts ?? [];
  if (!(error instanceof AppError) || error.code !== 'UPSTREAM_ERROR') return [];
  const attempts = (error.details as { attempts?: FailedAttempt[] } | undefined)?.attempts;
  return attempts ?? [{ model: primary, error: { code: error.code, message: error.message } }];
}

/** Adds a call's outcome to `tallies`: the answer's tokens to its model, a failure to each model that failed. */
export function tallyCall(tallies: ModelTallies, primary: string, result: ChatResult | undefined, error?: unknown): void {
  for (const attempt of failedOf(primary, result, error)) {
    if (attempt.skipped) continue;
    const t = (tallies[attempt.model] ??= empty());
    t.requests++;
    t.failedRequests++;
  }
  if (!result) return;
  const t = (tallies[result.model ?? primary] ??= empty());
  t.inputTokens += result.usage.inputTokens;
  t.outputTokens += result.usage.outputTokens;
  t.cachedInputTokens += result.usage.cachedInputTokens ?? 0;
  t.cacheWriteTokens += result.usage.cacheWriteTokens ?? 0;
  t.requests++;
}

/** The model, adding every call made through it (whole or streamed, answered or failed) to `tallies()`. */
export function tallied(resolved: ResolvedModel, tallies: () => ModelTallies): ResolvedModel {
  return { ...resolved, engine: aroundEachCall(resolved.engine, { start: () => undefined, end: (_, result, error) => tallyCall(tallies(), resolved.name, result, error) }) };
}

/** What `now` holds beyond `before`, model by model (models with nothing new left out). */
export function talliesSince(now: ModelTallies, before: ModelTallies = {}): ModelTallies {
  const out: ModelTallies = {};
  for (const [model, t] of Object.entries(now)) {
    const b = before[model] ?? empty();
    const d: ModelTally = {
      inputTokens: t.inputTokens - b.inputTokens,
      outputTokens: t.outputTokens - b.outputTokens,
      cachedInputTokens: t.cachedInputTokens - b.cachedInputTokens,
      cacheWriteTokens: t.cacheWriteTokens - b.cacheWriteTokens,
      requests: t.requests - b.requests,
      failedRequests: t.failedRequests - b.failedRequests,
    };
    if (Object.values(d).some((v) => v !== 0)) out[model] = d;
  }
  return out;
}
