/**
 * A piece of code to run, and what came of it: the contract between whatever asks (a workflow
 * `code` step, an agent's `code` tool, a write that checks a source) and whatever runs it (local
 * mode's worker threads, the code-runner function in AWS). Plain JSON both ways.
 */
export const CODE_LIMITS = {
  timeoutMs: { default: 2_000, max: 10_000 },
  memoryMb: { default: 32, max: 128 },
  /** The JSON of a result, at most. */
  resultBytes: 256 * 1024,
  /** `console.log` lines kept, at most (their UTF-8 bytes). */
  logBytes: 64 * 1024,
} as const;

export type CodeLanguage = 'javascript';

export interface CodeJob {
  /** `run`: call the program's `main` (or, as a `script`, take its top-level return); `check`: only parse it. */
  op: 'run' | 'check';
  language: CodeLanguage;
  source: string;
  /** `module`: the source exports `default function main(args)`; `script`: a body whose top-level `return` gives the result (or one that exports `main`). */
  form: 'module' | 'script';
  /** What `main` is given (JSON). */
  args?: unknown;
  timeoutMs: number;
  memoryMb: number;
}

/** Where in the source, 1-based. */
export interface CodePosition {
  line?: number;
  column?: number;
}

export type CodeFailure = CodePosition & {
  /** `syntax`: it does not parse; `error`: it threw; `timeout`, `memory`: a limit stopped it; `result`: what it gave is not JSON. */
  kind: 'syntax' | 'error' | 'timeout' | 'memory' | 'result';
  message: string;
};

export type CodeResult = { ok: true; value: unknown; logs: string[]; ms: number } | { ok: false; error: CodeFailure; logs: string[]; ms: number };

/** Runs code jobs: local mode's worker threads, or the code-runner function in AWS. */
export interface CodeRunner {
  run(job: CodeJob): Promise<CodeResult>;
}
