import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import type { components } from '../shared/contract/public-api';

/**
 * `npx cairn eval …`: evaluation runs as a CI gate, over Cairn's HTTP API (CAIRN_BASE_URL,
 * CAIRN_API_KEY). `eval run` starts a run, follows its progress, prints its scores and exits 0 when
 * it passes, 1 when a threshold or a regression fails it (or the run fails or is canceled), 2 when
 * it cannot be run as asked (a usage error, an unknown dataset or agent, Cairn unreachable).
 * `eval import` adds a JSON Lines file's cases to a dataset.
 */
export const USAGE = `Usage:
  npx cairn eval run --dataset <id> (--agent <id[:alias|:version]> | --workflow <id[:alias|:version]>)
                     [--scorer <name>]… [--threshold <scorer>=<min>]… [--compare-to <runId>]
                     [--concurrency <n>] [--max-latency-ms <n>] [--timeout <seconds>] [--json]
  npx cairn eval import <file.jsonl> (--dataset <id> | --create <name>)

Environment: CAIRN_BASE_URL (e.g. http://localhost:3000) and CAIRN_API_KEY.
Without --scorer, the scorers are those the thresholds name and those the dataset's cases hold
expectations for (answer: f1, contains, regex, sources: citations, toolCalls: tool_calls,
schema: json_schema, refuses: refusal).
Exit codes: 0 the run passed; 1 it failed a threshold, regressed against --compare-to, or did not
complete; 2 usage error, or the run could not be started.`;

export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  /** Waits between polls (tests pass a short one). */
  sleep?: (ms: number) => Promise<void>;
  fetch?: typeof fetch;
}

class UsageError extends Error {}

/** What a case's `expected` field is read by. */
const SCORER_OF_FIELD: Record<string, string> = { answer: 'f1', contains: 'contains', regex: 'regex', sources: 'citations', toolCalls: 'tool_calls', schema: 'json_schema', refuses: 'refusal' };

/** Max bytes of JSON Lines a request carries (the API takes 1 MiB a body). */
const IMPORT_CHUNK_BYTES = 900 * 1024;

type Schemas = components['schemas'];
type Run = Schemas['EvalRun'];
type ApiError = Schemas['Error']['error'];

/** An API answer: `data` when it succeeded, `error` when it did not. */
interface Answer<T> {
  status: number;
  data?: T;
  error?: ApiError;
  text: string;
}

interface Api {
  call<T>(method: string, path: string, body?: unknown, contentType?: string): Promise<Answer<T>>;
}

function apiOf(env: Record<string, string | undefined>, io: CliIo): Api {
  const base = env.CAIRN_BASE_URL?.replace(/\/+$/, '');
  if (!base) throw new UsageError('CAIRN_BASE_URL is not set (the Cairn API, e.g. http://localhost:3000 or the stack’s ApiUrl output)');
  if (!/^https?:\/\//.test(base)) throw new UsageError(`CAIRN_BASE_URL must be an http(s) URL, not ${base}`);
  const key = env.CAIRN_API_KEY;
  if (!key) throw new UsageError('CAIRN_API_KEY is not set');
  const doFetch = io.fetch ?? fetch;
  return {
    async call<T>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Answer<T>> {
      let response: Response;
      try {
        response = await doFetch(`${base}${path}`, {
          method,
          headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': contentType }) },
          ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
        });
      } catch (error) {
        throw new UsageError(`Cairn at ${base} did not answer: ${(error as Error).message}`);
      }
      const text = await response.text();
      let parsed: { data?: T; error?: ApiError } = {};
      try {
        parsed = text ? (JSON.parse(text) as typeof parsed) : {};
      } catch {
        // not JSON (a proxy's page): its text goes in the message
      }
      return { status: response.status, text, ...(response.ok ? { data: parsed.data } : { error: parsed.error }) };
    },
  };
}

/** The API's refusal as one line: `what: 400 VALIDATION_ERROR: …`. */
function refusal(what: string, answer: Answer<unknown>): UsageError {
  const detail = answer.error ? `${answer.error.code}: ${answer.error.message}` : answer.text.slice(0, 300);
  return new UsageError(`${what}: ${answer.status} ${detail}`.trim());
}

/** `agt_…`, `agt_…:live` or `agt_…:3` as a run's target. */
export function targetOf(kind: 'agent' | 'workflow', address: string): Record<string, string | number> {
  const [id, release, ...rest] = address.split(':');
  if (!id || rest.length > 0 || release === '') throw new UsageError(`--${kind} must be <id>, <id>:<alias> or <id>:<version>, not ${address}`);
  const key = kind === 'agent' ? 'agentId' : 'workflowId';
  if (release === undefined) return { [key]: id };
  return /^\d+$/.test(release) ? { [key]: id, version: Number(release) } : { [key]: id, alias: release };
}

/** `f1=0.6` as a threshold. */
export function thresholdOf(text: string): [string, number] {
  const match = /^([a-z][a-z0-9_]*)=(\d*\.?\d+)$/.exec(text);
  const min = match ? Number(match[2]) : NaN;
  if (!match || !(min >= 0 && min <= 1)) throw new UsageError(`--threshold must be <scorer>=<min> with min from 0 to 1, not ${text}`);
  return [match[1]!, min];
}

const positiveInt = (flag: string, text: string | undefined) => {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new UsageError(`--${flag} must be a positive whole number, not ${text}`);
  return Number(text);
};

/** The scorers a dataset's cases hold expectations for (from its first cases). */
async function scorersOfDataset(api: Api, datasetId: string): Promise<string[]> {
  const answer = await api.call<Array<Schemas['EvalCase']>>('GET', `/v1/eval-datasets/${encodeURIComponent(datasetId)}/cases?limit=100`);
  if (!answer.data) throw refusal(`Dataset ${datasetId}`, answer);
  const fields = new Set<string>();
  for (const c of answer.data) for (const field of Object.keys(c.expected ?? {})) fields.add(field);
  return Object.entries(SCORER_OF_FIELD).flatMap(([field, scorer]) => (fields.has(field) ? [scorer] : []));
}

const pad = (text: string, width: number) => text + ' '.repeat(Math.max(0, width - text.length));
const fixed = (n: number | null | undefined) => (n === null || n === undefined ? '—' : n.toFixed(3));

/** The finished run as a table of scores and a few lines of totals. */
export function report(run: Run): string {
  const summary = run.summary;
  if (!summary) return `Run ${run.id}: ${run.status} (no summary)`;
  const rows = Object.keys(summary.scores).map((scorer) => {
    const min = run.thresholds[scorer];
    const mean = summary.scores[scorer] ?? null;
    const verdict = min === undefined ? '' : mean !== null && mean >= min ? 'ok' : 'FAIL';
    return [scorer, fixed(mean), String(summary.scored[scorer] ?? 0), min === undefined ? '' : `≥ ${min}`, verdict];
  });
  const header = ['scorer', 'mean', 'cases', 'threshold', ''];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => pad(c, widths[i]!)).join('  ').trimEnd();
  const lines = [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line), ''];
  lines.push(`cases passed: ${summary.casesPassed}/${summary.cases}${summary.errors ? ` (${summary.errors} failed to run)` : ''}`);
  lines.push(`latency: p50 ${Math.round(summary.latencyMs.p50)} ms, p95 ${Math.round(summary.latencyMs.p95)} ms; tokens: ${summary.usage.inputTokens} in, ${summary.usage.outputTokens} out; cost: ${summary.usage.costUsd === null ? 'unknown' : `$${summary.usage.costUsd}`}`);
  if (run.compareTo) lines.push(`against ${run.compareTo}: ${summary.regressions.length} regressions${summary.regressions.length ? ` (${summary.regressions.slice(0, 20).join(', ')}${summary.regressions.length > 20 ? ', …' : ''})` : ''}, ${summary.improvements.length} improvements`);
  for (const failed of summary.failedThresholds) lines.push(`threshold failed: ${failed.scorer} ${fixed(failed.mean)} < ${failed.min}`);
  lines.push(`${summary.passed && run.status === 'completed' ? 'PASSED' : 'FAILED'}: run ${run.id} (${run.status})`);
  return lines.join('\n');
}

async function evalRun(args: string[], env: Record<string, string | undefined>, io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      dataset: { type: 'string' },
      agent: { type: 'string' },
      workflow: { type: 'string' },
      scorer: { type: 'string', multiple: true },
      threshold: { type: 'string', multiple: true },
      'compare-to': { type: 'string' },
      concurrency: { type: 'string' },
      'max-latency-ms': { type: 'string' },
      timeout: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  if (!values.dataset) throw new UsageError('--dataset is required');
  if (!values.agent === !values.workflow) throw new UsageError('give --agent or --workflow (one of them)');
  const target = values.agent ? targetOf('agent', values.agent) : targetOf('workflow', values.workflow!);
  const thresholds = Object.fromEntries((values.threshold ?? []).map(thresholdOf));
  const concurrency = positiveInt('concurrency', values.concurrency);
  const maxLatencyMs = positiveInt('max-latency-ms', values['max-latency-ms']);
  const timeoutMs = (positiveInt('timeout', values.timeout) ?? 3600) * 1000;
  const api = apiOf(env, io);
  const named = (values.scorer ?? []).flatMap((s) => s.split(',')).filter(Boolean);
  const scorers = [...new Set([...(named.length > 0 ? named : await scorersOfDataset(api, values.dataset)), ...Object.keys(thresholds)])];
  if (scorers.length === 0) throw new UsageError(`the cases of ${values.dataset} hold no expectation a scorer reads: name scorers with --scorer (latency and cost need none)`);

  const started = await api.call<Run>('POST', '/v1/eval-runs', {
    datasetId: values.dataset,
    target,
    scorers,
    thresholds,
    ...(values['compare-to'] ? { compareTo: values['compare-to'] } : {}),
    ...(concurrency ? { concurrency } : {}),
    ...(maxLatencyMs ? { maxLatencyMs } : {}),
  });
  if (!started.data) throw refusal('The run was not started', started);
  const runId = started.data.id;
  io.err(`run ${runId}: ${scorers.join(', ')} on ${started.data.total} cases\n`);

  const sleep = io.sleep ?? ((ms: number) => new Promise((resolve) => setTimeout(resolve, ms)));
  // A duration, not a time of day: measured on the monotonic clock.
  const deadline = performance.now() + timeoutMs;
  let shown = -1;
  for (;;) {
    const answer = await api.call<Run>('GET', `/v1/eval-runs/${runId}`);
    if (!answer.data) throw refusal(`Run ${runId}`, answer);
    const run = answer.data;
    if (run.progress.done !== shown) {
      shown = run.progress.done;
      io.err(`  ${run.status} ${run.progress.done}/${run.progress.total}\n`);
    }
    if (['completed', 'failed', 'canceled'].includes(run.status)) {
      io.out(`${values.json ? JSON.stringify(run, null, 2) : report(run)}\n`);
      return run.status === 'completed' && run.summary?.passed ? 0 : 1;
    }
    if (performance.now() > deadline) {
      io.err(`run ${runId} did not finish within ${timeoutMs / 1000} s (it goes on; GET /v1/eval-runs/${runId})\n`);
      return 1;
    }
    await sleep(1000);
  }
}

/** JSON Lines, each line checked to be JSON here (naming the file's line), sent in requests under the body limit. */
async function evalImport(args: string[], env: Record<string, string | undefined>, io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({ args, strict: true, allowPositionals: true, options: { dataset: { type: 'string' }, create: { type: 'string' } } });
  if (positionals.length !== 1) throw new UsageError('eval import takes one file');
  if (!values.dataset === !values.create) throw new UsageError('give --dataset <id> or --create <name> (one of them)');
  let text: string;
  try {
    text = await readFile(positionals[0]!, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${positionals[0]}: ${(error as Error).message}`);
  }
  const lines = text.split(/\r?\n/).map((line, i) => ({ line, number: i + 1 })).filter(({ line }) => line.trim() !== '');
  for (const { line, number } of lines) {
    try {
      JSON.parse(line);
    } catch (error) {
      throw new UsageError(`${positionals[0]}:${number} is not JSON: ${(error as Error).message} (nothing was added)`);
    }
  }
  if (lines.length === 0) throw new UsageError(`${positionals[0]} holds no case`);
  const api = apiOf(env, io);
  let datasetId = values.dataset;
  if (!datasetId) {
    const made = await api.call<Schemas['EvalDataset']>('POST', '/v1/eval-datasets', { name: values.create });
    if (!made.data) throw refusal('The dataset was not made', made);
    datasetId = made.data.id;
    io.err(`made dataset ${datasetId}\n`);
  }
  const chunks: Array<typeof lines> = [[]];
  let bytes = 0;
  for (const entry of lines) {
    const size = Buffer.byteLength(entry.line) + 1;
    if (bytes + size > IMPORT_CHUNK_BYTES && chunks.at(-1)!.length > 0) {
      chunks.push([]);
      bytes = 0;
    }
    chunks.at(-1)!.push(entry);
    bytes += size;
  }
  let added = 0;
  for (const chunk of chunks) {
    const answer = await api.call<{ added: number }>('POST', `/v1/eval-datasets/${encodeURIComponent(datasetId)}/cases`, chunk.map((e) => e.line).join('\n'), 'application/x-ndjson');
    if (!answer.data) {
      // The API names the line within the request: the file's line is the chunk's own.
      const field = answer.error?.details?.field;
      const within = Number(/^line (\d+)/.exec(typeof field === 'string' ? field : '')?.[1]);
      const where = Number.isInteger(within) && chunk[within - 1] ? ` at ${positionals[0]}:${chunk[within - 1]!.number}` : '';
      throw refusal(`Cases refused${where}${added > 0 ? ` (the ${added} before were added)` : ' (nothing was added)'}`, answer);
    }
    added += answer.data.added;
  }
  io.out(`${added} cases added to ${datasetId}\n`);
  return 0;
}

/** Runs the CLI; resolves to its exit code. */
export async function runCli(argv: string[], env: Record<string, string | undefined>, io: CliIo): Promise<number> {
  const [group, command, ...rest] = argv;
  try {
    if (group === 'eval' && command === 'run') return await evalRun(rest, env, io);
    if (group === 'eval' && command === 'import') return await evalImport(rest, env, io);
    if (group === undefined || group === '--help' || group === 'help' || command === '--help') {
      io.out(`${USAGE}\n`);
      return group === undefined ? 2 : 0;
    }
    throw new UsageError(`unknown command: ${[group, command].filter(Boolean).join(' ')}`);
  } catch (error) {
    // parseArgs' own errors (an unknown flag, a missing value) are usage errors too.
    const isUsage = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    if (!isUsage) throw error;
    io.err(`cairn: ${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
}
