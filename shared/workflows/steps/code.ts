import { z } from '@hono/zod-openapi';
import { AppError, ValidationError } from '../../errors';
import { integerBetween } from '../../schema-helpers';
import { expressionData } from '../../templates';
import { CODE_LIMITS, type CodeFailure, type CodeJob } from '../../code/code-job';
import type { StepResult, WorkKind } from './step-kind';
import type { Runtime } from '../../runtime';

const config = z.strictObject({
  language: z.literal('javascript').default('javascript').openapi({ description: 'javascript (QuickJS: ES2023, no Node or browser APIs)' }),
  source: z
    .string()
    .min(1)
    .max(100_000)
    .openapi({
      example: 'export default function main({ input, parameters, steps }) {\n  return { total: Math.round(parameters.amount * 1.21 * 100) / 100 };\n}',
      description: 'Exports `default function main({input, parameters, steps, item, index})` (async allowed), returning JSON: the step’s output',
    }),
  timeoutMs: integerBetween(1, CODE_LIMITS.timeoutMs.max).default(CODE_LIMITS.timeoutMs.default).openapi({ description: `At most ${CODE_LIMITS.timeoutMs.max}` }),
  memoryMb: integerBetween(1, CODE_LIMITS.memoryMb.max).default(CODE_LIMITS.memoryMb.default).openapi({ description: `At most ${CODE_LIMITS.memoryMb.max}` }),
});

/** A run of tenant code that failed: its failure and the lines it logged (kept with the step). */
export class CodeError extends AppError {
  constructor(
    failure: CodeFailure,
    readonly logs: string[],
    /** How long the code ran before it failed (counted in usage like a success's). */
    readonly ms: number,
  ) {
    const where = failure.line !== undefined ? ` (line ${failure.line}${failure.column !== undefined ? `, column ${failure.column}` : ''})` : '';
    super('UNPROCESSABLE', `${failure.message}${where}`, { kind: failure.kind, ...(failure.line !== undefined ? { line: failure.line, column: failure.column } : {}) }, { retryable: false });
  }
}

/** The runtime's code runner, or a 500 saying this function has none. */
export function codeRunnerOf(rt: Runtime) {
  if (!rt.code) throw new AppError('INTERNAL_ERROR', 'This function cannot run code (no code runner: CODE_RUNNER_FUNCTION is not set)');
  return rt.code;
}

/**
 * `code`: a few lines of JavaScript run in a sandbox (code/javascript-sandbox.ts: QuickJS, nothing
 * of the host reachable), a fresh one each run, under the step's time and memory limits. Its
 * `main` gets what templates read; what it returns is the output, and its `console.log` lines are
 * kept with the step (`logs`). A source that does not parse is a 400 when the workflow is written;
 * a run that throws, or passes a limit, fails the step without a retry (it would fail the same way).
 */
export const code: WorkKind<typeof config> = {
  type: 'code',
  config,
  templateFields: [],
  isOutputPath: () => true,
  async prepare(cfg, { rt, path }) {
    const checked = await codeRunnerOf(rt).run({ op: 'check', language: cfg.language, source: cfg.source, form: 'module', timeoutMs: CODE_LIMITS.timeoutMs.default, memoryMb: CODE_LIMITS.memoryMb.default });
    if (!checked.ok) {
      const { line, column, message } = checked.error;
      throw new ValidationError(`${path}.source`, `does not parse: ${message}${line !== undefined ? ` at line ${line}${column !== undefined ? `, column ${column}` : ''}` : ''}`, { line, column });
    }
    return cfg;
  },
  async execute(cfg, { rt, vars }): Promise<StepResult> {
    const job: CodeJob = { op: 'run', language: cfg.language, source: cfg.source, form: 'module', args: expressionData(vars), timeoutMs: cfg.timeoutMs, memoryMb: cfg.memoryMb };
    const result = await codeRunnerOf(rt).run(job);
    if (!result.ok) throw new CodeError(result.error, result.logs, result.ms);
    return { output: result.value, logs: result.logs, codeMs: result.ms };
  },
};
