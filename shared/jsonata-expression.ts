import jsonata from 'jsonata';
import { AppError } from './errors';

/**
 * JSONata expressions of workflow steps (`transform`, `condition`, `map` items): parsed when the
 * workflow is written, so a syntax error is a 400 there; evaluated with JSONata's own guardrails
 * (time, stack depth, sequence length), so an expression that loops cannot hold a worker. JSONata
 * runs no JavaScript: an expression reads the data it is given and nothing else.
 */
export const EXPRESSION_LIMITS = { timeout: 1_000, stack: 200, sequence: 100_000 } as const;

interface JsonataError {
  code?: string;
  position?: number;
  message?: string;
}

/** Why an expression cannot be parsed, or undefined when it can. */
export function expressionError(text: string): string | undefined {
  try {
    jsonata(text);
    return undefined;
  } catch (error) {
    const e = error as JsonataError;
    return `is not a valid JSONata expression: ${e.message ?? String(error)}${e.position !== undefined ? ` (at character ${e.position})` : ''}`;
  }
}

/** Evaluates an expression over `data`; a failure is the step's, and retrying the same data cannot help. */
export async function evaluateExpression(text: string, data: unknown): Promise<unknown> {
  try {
    const result: unknown = await jsonata(text, EXPRESSION_LIMITS).evaluate(data);
    return plain(result);
  } catch (error) {
    const e = error as JsonataError;
    throw new AppError('UNPROCESSABLE', `The expression failed: ${e.message ?? String(error)}`, { expression: text.slice(0, 200), ...(e.code ? { jsonataCode: e.code } : {}) }, { retryable: false, cause: error });
  }
}

/** JSONata's results may be its own sequences (arrays with extra fields) or undefined: stored as plain JSON. */
function plain(value: unknown): unknown {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}
