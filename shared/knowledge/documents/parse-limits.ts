import { DocumentError } from '../../errors';

/** What one file may cost a worker: pages, characters of text and time. */
export interface ParseLimits {
  maxPages: number;
  maxChars: number;
  /** Throws PARSE_TIMEOUT once the file's time is up (checked between pages, slides and sheets). */
  checkDeadline(): void;
}

export const DEFAULT_PARSE_LIMITS = { maxPages: 5_000, maxChars: 20_000_000, timeoutMs: 120_000 };

export function parseLimits(options: { maxPages?: number; maxChars?: number; timeoutMs?: number } = {}): ParseLimits {
  const { maxPages, maxChars, timeoutMs } = { ...DEFAULT_PARSE_LIMITS, ...options };
  const deadline = performance.now() + timeoutMs;
  return {
    maxPages,
    maxChars,
    checkDeadline() {
      if (performance.now() > deadline) throw new DocumentError('PARSE_TIMEOUT', `Reading the file took more than ${Math.round(timeoutMs / 1000)} s`);
    },
  };
}
