import { isolatedPool, serveAsWorker } from '../isolated-workers';
import type { CodeJob, CodeResult, CodeRunner } from './code-job';
import { runJavaScript } from './javascript-sandbox';

/**
 * Local mode's code runner: jobs run in a pool of worker threads (this module, started for its
 * role), so code that runs long or leaves QuickJS in disorder never holds the thread that serves
 * requests; a worker past its job's time (QuickJS's own interrupt missed it, inside one long
 * built-in call) is ended and replaced. Where no worker can start, the job runs in this thread,
 * still under QuickJS's limits.
 */
const ROLE = 'cairn-code-runner';
/** A grace past a job's own limit before its worker is ended (QuickJS stops it itself well before). */
const HARD_STOP_MS = 500;

serveAsWorker<CodeJob, CodeResult>(ROLE, (job) => runJavaScript(job));

// QuickJS's memory is WebAssembly memory, bounded by the job's memoryMb; the heap limit is for the JavaScript around it.
const pool = isolatedPool<CodeJob, CodeResult>(ROLE, import.meta.url, { size: 2, heapMb: 256 });

/** Whether code has run in worker threads here (false before the first job, or where none can start). */
export const codeRunsIsolated = () => pool.isolated();

export const localCodeRunner: CodeRunner = {
  async run(job) {
    const outcome = await pool.call(job, { timeoutMs: job.timeoutMs + HARD_STOP_MS });
    if (!outcome) return runJavaScript(job);
    if ('reply' in outcome) return outcome.reply;
    const kind = outcome.failure === 'exit' ? 'error' : outcome.failure;
    const message =
      kind === 'timeout' ? 'The code ran past its time limit (timeoutMs) and was stopped' : kind === 'memory' ? 'The code used more memory than its limit and was stopped' : `The sandbox ended unexpectedly (${outcome.message})`;
    return { ok: false, error: { kind, message }, logs: [], ms: job.timeoutMs + HARD_STOP_MS };
  },
};
