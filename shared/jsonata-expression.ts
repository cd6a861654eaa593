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

interface AstNode {
  type?: string;
  value?: unknown;
  steps?: AstNode[];
  [key: string]: unknown;
}

/**
 * The field paths an expression reads from the data it is given (the names of each path's leading
 * steps, `$.a.b` as `a.b`), for checking them against what the data will hold. Names read relative
 * to something else — inside a filter or predicate, after a variable, in a lambda's body — are left
 * out: they cannot be checked against the root, and a check that guesses would refuse good rules.
 * Undefined when the expression does not parse.
 */
export function rootPaths(text: string): string[][] | undefined {
  let ast: AstNode;
  try {
    ast = jsonata(text).ast() as AstNode;
  } catch {
    return undefined;
  }
  const found: string[][] = [];
  const visit = (node: unknown, atRoot: boolean): void => {
    if (Array.isArray(node)) return node.forEach((n) => visit(n, atRoot));
    if (!node || typeof node !== 'object') return;
    const n = node as AstNode;
    if (n.type === 'path' && Array.isArray(n.steps)) {
      const steps = n.steps;
      // `$` alone is the root itself; any other variable is a value of the expression's own.
      const first = steps[0]?.type === 'variable' && steps[0].value === '' ? 1 : 0;
      if (atRoot && (first === 0 || steps.length > 1)) {
        const names: string[] = [];
        for (const step of steps.slice(first)) {
          if (step.type !== 'name' || typeof step.value !== 'string') break;
          names.push(step.value);
          if (Object.keys(step).some((k) => !['type', 'value', 'position'].includes(k))) break; // a filter or predicate follows
        }
        if (names.length > 0 && (steps[first]?.type === 'name')) found.push(names);
      }
      // Whatever a step holds (filters, predicates, expressions as steps) reads relative to it.
      steps.forEach((step, i) => visit(Object.fromEntries(Object.entries(step).filter(([k]) => k !== 'type' && k !== 'value' && k !== 'position')), atRoot && i === 0 && step.type !== 'name' && step.type !== 'variable'));
      return;
    }
    if (n.type === 'name' && typeof n.value === 'string' && atRoot) found.push([n.value]);
    for (const [key, child] of Object.entries(n)) {
      if (key === 'position' || key === 'value' || key === 'type') continue;
      visit(child, atRoot && !(n.type === 'lambda' && key === 'body'));
    }
  };
  visit(ast, true);
  return found;
}
