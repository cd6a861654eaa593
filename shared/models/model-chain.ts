import { AppError, UpstreamError } from '../errors';
import { errorFields, log } from '../log';
import { emitMetrics } from '../metrics';
import type { CircuitBreakers } from './circuit-breaker';
import type { ChatModel, ChatRequest, ChatResult, FailedAttempt, ResolvedModel } from './types';

/**
 * A model and its fallbacks as one model. Each call goes to the first model whose circuit admits
 * it, with its own time limit; on a 429, a 5xx, a time-out or a lost connection the same request
 * (messages, tools, rounds — each provider translates them) goes to the next. Any other failure (a
 * 400, a refused content policy, a prompt too long, a spent budget) is the answer: the next model
 * would be refused the same. A stream falls back only before its first text; after that the
 * caller has part of a reply, and a failure is the stream's.
 */

/** Whether a failure is the provider's state rather than the request's: those move to the next model. */
export function fallsBack(error: unknown): boolean {
  if (!(error instanceof AppError)) return true; // a reply the provider's client could not read
  if (error.code !== 'UPSTREAM_ERROR') return false;
  const status = (error.details as { status?: unknown } | undefined)?.status;
  return status === 'timeout' || status === 'network' || status === 'stream' || status === 408 || status === 429 || (typeof status === 'number' && status >= 500);
}

function attemptOf(model: string, error: unknown): FailedAttempt {
  const details = error instanceof AppError ? (error.details as { status?: number | string } | undefined) : undefined;
  return {
    model,
    error: {
      code: error instanceof AppError ? error.code : 'UPSTREAM_ERROR',
      message: error instanceof AppError ? error.message : `Model ${model} gave a reply that could not be read`,
      ...(details?.status !== undefined ? { status: details.status } : {}),
    },
  };
}

const retryAfterOf = (error: unknown) => (error instanceof AppError ? (error.details as { retryAfterSeconds?: number } | undefined)?.retryAfterSeconds : undefined);

/** Why a model of the chain is passed over before it is called, if it is. */
function skipped(candidate: ResolvedModel, request: ChatRequest, breakers: CircuitBreakers): FailedAttempt | undefined {
  if ((request.tools?.length || request.toolRounds?.length) && !candidate.engine.supportsTools) {
    return { model: candidate.name, skipped: 'no_tools', error: { code: 'UNPROCESSABLE', message: `${candidate.name} cannot call tools` } };
  }
  if (!breakers.admit(candidate.name)) {
    emitMetrics({ model: candidate.name }, { ModelCallsSkipped: { value: 1, unit: 'count' } });
    return { model: candidate.name, skipped: 'circuit_open', error: { code: 'SERVICE_UNAVAILABLE', message: `${candidate.name} failed repeatedly and is not called until its cool-down ends` } };
  }
  return undefined;
}

/** No model answered: the only failure as it was, or every attempt named. */
function noneAnswered(failed: FailedAttempt[], last: unknown): AppError {
  if (failed.length === 1 && !failed[0]!.skipped && last instanceof AppError) return last;
  const list = failed.map((f) => `${f.model} (${f.skipped === 'circuit_open' ? 'circuit open' : f.skipped === 'no_tools' ? 'cannot call tools' : String(f.error.status ?? f.error.code)})`).join(', ');
  return new UpstreamError(`No model answered: ${list}`, { attempts: failed }, { retryable: true });
}

/** The call's signal: the caller's, and the model's own time limit. */
const attemptSignal = (signal: AbortSignal, timeoutMs: number | undefined) => (timeoutMs ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : signal);

export function modelChain(candidates: ResolvedModel[], breakers: CircuitBreakers): ResolvedModel {
  const [primary] = candidates;
  if (!primary) throw new Error('a model chain needs a model');

  /** A failed call: the circuit hears of it, and it is thrown unless the next model may answer. */
  const failedCall = (candidate: ResolvedModel, error: unknown, signal: AbortSignal, failed: FailedAttempt[], next: ResolvedModel | undefined) => {
    if (signal.aborted) {
      breakers.released(candidate.name); // the caller went away: nothing is known of the model
      throw error;
    }
    if (!fallsBack(error)) {
      breakers.succeeded(candidate.name); // it answered, refusing this request
      throw error;
    }
    breakers.failed(candidate.name, retryAfterOf(error));
    failed.push(attemptOf(candidate.name, error));
    if (next) log.warn('model failed; trying the next of its chain', { model: candidate.name, next: next.name, ...errorFields(error) });
  };
  const answered = (candidate: ResolvedModel, result: ChatResult, failed: FailedAttempt[]): ChatResult => {
    breakers.succeeded(candidate.name);
    return { ...result, model: candidate.name, ...(failed.length > 0 ? { failedAttempts: failed } : {}) };
  };

  /** The first model that answers `call` (each skipped, or failed over, as the chain says), and what it gave. */
  const firstAnswering = async <T>(request: ChatRequest, signal: AbortSignal, call: (candidate: ResolvedModel, request: ChatRequest, signal: AbortSignal) => Promise<T>) => {
    const failed: FailedAttempt[] = [];
    let last: unknown;
    for (const [i, candidate] of candidates.entries()) {
      const skip = skipped(candidate, request, breakers);
      if (skip) {
        failed.push(skip);
        continue;
      }
      try {
        return { candidate, value: await call(candidate, { ...request, model: candidate.model }, attemptSignal(signal, candidate.timeoutMs)), failed };
      } catch (error) {
        failedCall(candidate, error, signal, failed, candidates[i + 1]);
        last = error;
      }
    }
    throw noneAnswered(failed, last);
  };

  const engine: ChatModel = {
    provider: primary.engine.provider,
    supportsTools: candidates.some((c) => c.engine.supportsTools),
    async generate(request, signal) {
      const { candidate, value, failed } = await firstAnswering(request, signal, (c, r, s) => c.engine.generate(r, s));
      return answered(candidate, value, failed);
    },
    async *stream(request, signal) {
      // A stream has answered once its first step came (text, or the whole result).
      const opened = await firstAnswering(request, signal, async (c, r, s) => {
        const steps = c.engine.stream(r, s);
        return { steps, first: await steps.next() };
      });
      const { candidate, failed } = opened;
      const { steps, first } = opened.value;
      // Text has come: this model's stream is the reply, whatever happens next.
      let settled = false;
      try {
        if (!first.done) yield first.value;
        const result = answered(candidate, first.done ? first.value : yield* steps, failed);
        settled = true;
        return result;
      } catch (error) {
        settled = true;
        if (signal.aborted || !fallsBack(error)) breakers.released(candidate.name);
        else breakers.failed(candidate.name, retryAfterOf(error));
        throw error;
      } finally {
        // A consumer that stopped reading early: the model neither failed nor finished.
        if (!settled) breakers.released(candidate.name);
      }
    },
  };
  return { ...primary, engine };
}
