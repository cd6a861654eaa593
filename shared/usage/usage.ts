import { config } from '../config';
import type { TokenUsage } from '../models/types';
import { errorFields, log } from '../log';
import type { Runtime } from '../runtime';
import { USAGE_COUNTS, type UsageCounts } from '../store/usage';
import type { TenantScope } from '../tenancy';

/**
 * Who used how much: every turn, workflow step, search and ingested batch adds what it used (tokens,
 * model calls, tool calls, searches, capacity units, bytes) to a counter per tenant × day × API key ×
 * subject (agent, workflow, knowledge source) × model; reports group them by day, subject, model or
 * key, with a cost estimated from `MODEL_PRICES`.
 */
export interface UsageEvent extends Partial<UsageCounts> {
  /** The API key that asked (`-` when no key did, e.g. work the platform API started). */
  keyId?: string;
  subject: { kind: 'agent' | 'workflow' | 'knowledge-source'; id: string };
  /** `provider/model`; `-` for work no model did (a search, an ingested batch). */
  model?: string;
  /** The subject's release that did the work: a version number, or draft. */
  release?: number | 'draft';
  /** Work apart from the subject's own requests, counted apart (`memory`: an agent's memory extraction). */
  operation?: 'memory';
}

/**
 * Adds an event to the tenant's counters. The work it counts is done and answered: a failed write
 * is logged, never turned into a failed request.
 */
export async function recordUsage(rt: Runtime, scope: TenantScope, event: UsageEvent): Promise<void> {
  if (USAGE_COUNTS.every((c) => !event[c])) return;
  const day = new Date(rt.clock.now()).toISOString().slice(0, 10);
  try {
    const bucket = {
      day,
      keyId: event.keyId ?? '-',
      subject: `${event.subject.kind}:${event.subject.id}`,
      model: event.model ?? '-',
      ...(event.release === undefined ? {} : { release: String(event.release) }),
      ...(event.operation ? { operation: event.operation } : {}),
    };
    await rt.store.usage.add(scope, bucket, event);
  } catch (error) {
    log.error('usage not recorded', { tenantId: scope.tenantId, subject: event.subject, model: event.model, ...errorFields(error) });
  }
}

const isFree = (model: string) => model === '-' || model.startsWith('local/');

/** Whether a model's cost is known: it is free, or MODEL_PRICES prices it. */
export const hasPrice = (model: string) => isFree(model) || model in config.modelPrices;

/**
 * USD for a model's tokens, or null when the model has no price in MODEL_PRICES (the built-in engine
 * is free). Cached input is priced at `cachedInput` and cache writes at `cacheWrite` where the price
 * gives them, else as input.
 */
export function costOfTokens(model: string, tokens: TokenUsage): number | null {
  // Work no model did, the built-in engine, and calls that failed before any token was counted cost nothing.
  if (isFree(model) || tokens.inputTokens + tokens.outputTokens === 0) return 0;
  const price = config.modelPrices[model];
  if (!price) return null;
  const cached = tokens.cachedInputTokens ?? 0;
  const written = tokens.cacheWriteTokens ?? 0;
  const plain = Math.max(0, tokens.inputTokens - cached - written);
  return (plain * price.input + cached * (price.cachedInput ?? price.input) + written * (price.cacheWrite ?? price.input) + tokens.outputTokens * price.output) / 1000;
}

/** The sum of costs, rounded to a millionth of a dollar; null when any is unknown (a model without a price). */
export const totalCost = (costs: Array<number | null>): number | null => (costs.some((c) => c === null) ? null : Math.round(costs.reduce((s: number, c) => s + c!, 0) * 1e6) / 1e6);
