import { SpanKind } from '@opentelemetry/api';
import { z } from '@hono/zod-openapi';
import { FINISHED_EXECUTION, getExecution, startExecution } from '../workflows';
import { isPlainObject } from '../json-objects';
import { assertReleaseExists } from '../releases';
import { isoNow } from '../clock';
import { collection } from '../collection';
import { AppError, ConflictError, NotFoundError, ValidationError } from '../errors';
import { newId } from '../ids';
import { log } from '../log';
import type { EvalCaseMessage } from '../queue/messages';
import type { Delivery } from '../queue/queue';
import type { Runtime, RuntimeWith } from '../runtime';
import { recordFields } from '../schema-helpers';
import type { EvalResultRecord } from '../store/eval-results';
import { inSpan } from '../telemetry';
import { scopeOf, type TenantScope } from '../tenancy';
import { costOfTokens, totalCost } from '../usage';
import { namedUser, turnUser, type EndUser } from '../identity';
import { datasets, deleteDataset, sourcePaths } from './datasets';
import { judgeInput, judgeModel, judgeReply, type Judgement } from './judge';
import { scoreCase, SCORER_NAMES, type Observed, type Score, type ScorerName } from './scorers';

/**
 * Evaluation runs: every case of a dataset run against an agent (its draft, a version or an
 * alias) and scored. Each case is one message on the steps queue; `concurrency` cases are in
 * flight at once (each finished case sends the next), so a large run spreads over the workers in
 * AWS and resumes after a crash locally. When the last case is counted, the run is summed up:
 * each scorer's mean, whether every threshold is met, and, against `compareTo`, the cases that
 * went from passing to failing (regressions) and back (improvements).
 */
const scorerName = z.enum(SCORER_NAMES as [ScorerName, ...ScorerName[]], { error: `must be one of: ${SCORER_NAMES.join(', ')}` });
const JUDGE = 'llm_judge';

export const runInput = z
  .strictObject({
    datasetId: z.string().min(1).max(200),
    target: z
      .strictObject({
        agentId: z.string().min(1).max(200).optional(),
        workflowId: z.string().min(1).max(200).optional(),
        alias: z.string().min(1).max(32).optional(),
        version: z.int().min(1).optional(),
      })
      .superRefine((t, ctx) => {
        if ((t.agentId === undefined) === (t.workflowId === undefined)) ctx.addIssue({ code: 'custom', path: ['agentId'], message: 'name an agentId or a workflowId (one of them)' });
        if (t.alias !== undefined && t.version !== undefined) ctx.addIssue({ code: 'custom', path: ['version'], message: 'names an alias or a version, not both' });
      })
      .openapi({ description: 'The agent or workflow to evaluate: its draft, or a version or alias of it. A workflow is executed with the case’s question as its input (and metadata.parameters as its parameters); its output is the reply' }),
    scorers: z
      .array(scorerName)
      .min(1)
      .max(SCORER_NAMES.length)
      .refine((list) => new Set(list).size === list.length, { error: 'must not repeat a scorer' })
      .openapi({ description: `${SCORER_NAMES.join(', ')}: all but llm_judge need no model` }),
    judge: judgeInput.optional().openapi({ description: 'With the llm_judge scorer: the model that grades (a configured provider’s) and the rubric' }),
    thresholds: z
      .partialRecord(scorerName, z.number().min(0).max(1))
      .default({})
      .openapi({ description: 'The least mean each scorer must reach for the run to pass; a case passes when each of its scores meets its scorer’s threshold (1 where none is set)' }),
    maxLatencyMs: z.int().min(1).max(3_600_000).optional().openapi({ description: 'For the latency scorer, where a case sets none' }),
    maxCostUsd: z.number().positive().max(1000).optional().openapi({ description: 'For the cost scorer, where a case sets none' }),
    compareTo: z.string().min(1).max(200).optional().openapi({ description: 'An earlier run of the same dataset: cases that passed there and fail here are regressions (the run fails)' }),
    concurrency: z.int().min(1).max(50).default(5).openapi({ description: 'Cases in flight at once' }),
  })
  .superRefine((input, ctx) => {
    for (const name of Object.keys(input.thresholds)) {
      if (!input.scorers.includes(name as ScorerName)) ctx.addIssue({ code: 'custom', path: ['thresholds', name], message: 'names a scorer the run does not use' });
    }
    if (input.scorers.includes(JUDGE) && !input.judge) ctx.addIssue({ code: 'custom', path: ['judge'], message: 'is required with the llm_judge scorer: {model, rubric}' });
    if (!input.scorers.includes(JUDGE) && input.judge) ctx.addIssue({ code: 'custom', path: ['judge'], message: 'goes with the llm_judge scorer, which the run does not use' });
  })
  .openapi('EvalRunInput', { example: { datasetId: 'eds_01jd8x2k3m4n5p6q7r8s9t0v1w', target: { agentId: 'agt_01jd8x2k3m4n5p6q7r8s9t0v1w', alias: 'live' }, scorers: ['f1', 'citations'], thresholds: { f1: 0.6 } } });
export type RunInput = z.infer<typeof runInput>;

const STATUSES = ['queued', 'running', 'completed', 'failed', 'canceled'] as const;
const summaryShape = z.object({
  cases: z.number(),
  scores: z.record(z.string(), z.number().nullable()).openapi({ description: 'Each scorer’s mean over the cases it scored (null: none)' }),
  scored: z.record(z.string(), z.number()).openapi({ description: 'How many cases each scorer scored (the others did not fit it)' }),
  passed: z.boolean().openapi({ description: 'Every threshold met, and no regression against compareTo' }),
  failedThresholds: z.array(z.object({ scorer: z.string(), min: z.number(), mean: z.number().nullable() })),
  casesPassed: z.number(),
  errors: z.number().openapi({ description: 'Cases whose target failed (they fail)' }),
  regressions: z.array(z.string()).openapi({ description: 'Case ids that passed in compareTo and fail here' }),
  improvements: z.array(z.string()),
  usage: z.object({ inputTokens: z.number(), outputTokens: z.number(), costUsd: z.number().nullable() }),
  judgeUsage: z.object({ inputTokens: z.number(), outputTokens: z.number(), costUsd: z.number().nullable() }).optional().openapi({ description: 'What llm_judge’s grading used (apart from usage, the target’s)' }),
  latencyMs: z.object({ p50: z.number(), p95: z.number() }),
});
const storedRun = z.object({
  ...recordFields,
  datasetId: z.string(),
  target: z.object({ agentId: z.string().optional(), workflowId: z.string().optional(), alias: z.string().optional(), version: z.number().optional() }),
  scorers: z.array(z.string()),
  thresholds: z.record(z.string(), z.number()),
  maxLatencyMs: z.number().optional(),
  maxCostUsd: z.number().optional(),
  judge: z.object({ model: z.string(), rubric: z.string() }).optional(),
  compareTo: z.string().optional(),
  concurrency: z.number(),
  status: z.enum(STATUSES),
  total: z.number(),
  startedAt: z.string().optional(),
  finishedAt: z.string().optional(),
  summary: summaryShape.optional(),
});
type StoredRun = z.infer<typeof storedRun>;

export const runs = collection<StoredRun>('EVAL_RUN', 'evalRun', 'eval run', storedRun);

export const runShown = storedRun
  .omit({ version: true })
  .extend({ progress: z.object({ done: z.number(), total: z.number() }) })
  .openapi('EvalRun');

export const resultShown = z
  .object({
    caseId: z.string(),
    position: z.int(),
    input: z.unknown(),
    expected: z.record(z.string(), z.unknown()).optional(),
    output: z.string(),
    scores: z.record(z.string(), z.number().nullable()),
    detail: z.record(z.string(), z.record(z.string(), z.number())).optional(),
    skipped: z.record(z.string(), z.string()).optional().openapi({ description: 'Why a scorer did not score the case (its expectation does not fit)' }),
    passed: z.boolean(),
    requestId: z.string().openapi({ description: 'The case’s trace: GET /v1/traces/{requestId}' }),
    latencyMs: z.number(),
    usage: z.object({ inputTokens: z.number(), outputTokens: z.number() }),
    costUsd: z.number().nullable(),
    model: z.string().optional(),
    targetVersion: z.union([z.number(), z.literal('draft')]).optional(),
    error: z.string().optional(),
    note: z.string().optional().openapi({ description: 'Something the run did otherwise than the case asked, and why (a context.userId not used where the tenant requires verified end users)' }),
    judge: z
      .object({ reasoning: z.string().optional(), model: z.string(), usage: z.object({ inputTokens: z.number(), outputTokens: z.number() }), costUsd: z.number().nullable() })
      .optional()
      .openapi({ description: 'llm_judge: the grader’s reasoning, model and usage' }),
    finishedAt: z.string(),
  })
  .openapi('EvalResult');

const FINISHED = new Set(['completed', 'failed', 'canceled']);

function shownRun(run: StoredRun, progress: { done: number } | undefined) {
  const { version: _v, ...shown } = run;
  return { ...shown, progress: { done: progress?.done ?? 0, total: run.total } };
}

async function present(rt: Runtime, scope: TenantScope, run: StoredRun) {
  return shownRun(run, await rt.store.evalResults.progress(scope, run.id));
}

/** Sends the cases at these positions. */
async function send(rt: Runtime, scope: TenantScope, run: Pick<StoredRun, 'id' | 'datasetId'>, positions: number[]) {
  if (positions.length === 0) return;
  await rt.queues.workflowSteps.send(positions.map((position): EvalCaseMessage => ({ type: 'eval-case', tenantId: scope.tenantId, runId: run.id, datasetId: run.datasetId, position })));
}

/** Starts a run: 404 for an unknown dataset, agent, version or alias; 400 for an empty dataset or a comparison with another dataset's run. */
export async function startRun(rt: Runtime, scope: TenantScope, input: RunInput) {
  const dataset = await datasets.get(rt, scope, input.datasetId);
  if (dataset.caseCount === 0) throw new ValidationError('datasetId', `names eval dataset ${dataset.id}, which has no cases`);
  const { agentId, workflowId, alias, version } = input.target;
  await assertReleaseExists(rt, scope, agentId !== undefined ? 'AGENT' : 'WORKFLOW', agentId !== undefined ? 'agent' : 'workflow', (agentId ?? workflowId)!, { alias, version });
  // A judge must be a configured provider's model: with the built-in engine only, a 400 naming the setting.
  if (input.judge) await judgeModel(rt, input.judge);
  if (input.compareTo !== undefined) {
    const before = await runs.get(rt, scope, input.compareTo);
    if (before.datasetId !== input.datasetId) throw new ValidationError('compareTo', `names a run of eval dataset ${before.datasetId}, not ${input.datasetId}`);
  }
  const { record } = await runs.create(rt, scope, { ...input, status: 'queued', total: dataset.caseCount });
  await rt.store.evalResults.start(scope, record.id, record.total);
  // Each of the first `concurrency` cases starts a chain: a case sends the one `concurrency` after it.
  await send(rt, scope, record, Array.from({ length: Math.min(record.concurrency, record.total) }, (_, i) => i + 1));
  return present(rt, scope, record);
}

export async function getRun(rt: Runtime, scope: TenantScope, id: string) {
  return present(rt, scope, await runs.get(rt, scope, id));
}

/** Newest first; with `datasetId`, that dataset's runs (a page may then hold fewer than `limit`). */
export async function listRuns(rt: Runtime, scope: TenantScope, page: { limit: number; cursor?: string }, datasetId?: string) {
  const listed = await runs.list(rt, scope, page);
  const items = listed.items.filter((r) => datasetId === undefined || r.datasetId === datasetId);
  // One batch read for the page's progress, not one read a run.
  const progress = await rt.store.evalResults.progressOf(scope, items.map((r) => r.id));
  return { ...listed, items: items.map((r) => shownRun(r, progress.get(r.id))) };
}

export async function listResults(rt: Runtime, scope: TenantScope, id: string, page: { limit: number; cursor?: string }) {
  await runs.get(rt, scope, id);
  return rt.store.evalResults.listResults(scope, id, page);
}

/** Stops a run: cases not yet started are not run; a finished run is a 409. */
export async function cancelRun(rt: Runtime, scope: TenantScope, id: string) {
  const updated = await runs.update(rt, scope, id, (run) => {
    if (FINISHED.has(run.status)) throw new ConflictError(`eval run ${id} is ${run.status}`, { status: run.status });
    return { ...run, status: 'canceled', finishedAt: isoNow(rt.clock) };
  });
  if (!updated) throw new NotFoundError('eval run', id);
  return present(rt, scope, updated);
}

/** Deletes a dataset and its cases; one with runs queued or running is a 409 naming them. */
export async function removeDataset(rt: Runtime, scope: TenantScope, datasetId: string) {
  const inFlight = (await runs.containing(rt, scope, 'datasetId', datasetId)).filter((r) => r.datasetId === datasetId && !FINISHED.has(r.status));
  if (inFlight.length > 0) throw new ConflictError(`eval dataset ${datasetId} has runs in flight (${inFlight.map((r) => r.id).join(', ')}): wait for them or cancel them first`, { runs: inFlight.map((r) => r.id) });
  return deleteDataset(rt, scope, datasetId);
}

/** What a case asks: its question, or the last user message of its chat. */
function questionOf(input: unknown): string {
  if (typeof input === 'string') return input;
  const messages = input as Array<{ role: string; content: string }>;
  return [...messages].reverse().find((m) => m.role === 'user')!.content;
}

const callsOf = (calls: unknown[] | undefined) =>
  (calls ?? []).flatMap((c) => (c && typeof c === 'object' && typeof (c as { tool?: unknown }).tool === 'string' ? [{ name: (c as { tool: string }).tool, arguments: (c as { arguments?: Record<string, unknown> }).arguments }] : []));

type Found = NonNullable<Awaited<ReturnType<Runtime['store']['evalCases']['getCase']>>>;
type Extra = Pick<EvalResultRecord, 'usage' | 'model' | 'targetVersion'>;
/** What the target did with a case: its reply as the scorers read it, or the target's own refusal (a 4xx of its own: the case fails). */
type Outcome = { observed: Observed; extra: Extra } | { refused: string; latencyMs: number };

/** Who a case asks as: the user its `context` names (named by the dataset, never verified), or nobody — and why, where the tenant requires verified users. */
type CaseUser = { user?: EndUser; note?: string };
async function caseUser(rt: Runtime, scope: TenantScope, found: Found): Promise<CaseUser> {
  if (!found.context) return {};
  const { user, refused } = await namedUser(rt, scope, found.context.userId, found.context.groups);
  return refused ? { note: `Asked for nobody, not the case's context.userId: ${refused}` } : { user };
}

/** The case asked of an agent, in one turn. */
async function askAgent(rt: RuntimeWith<'agentTurn'>, scope: TenantScope, run: StoredRun, found: Found, asking: CaseUser): Promise<Outcome> {
  if (!rt.agentTurn) throw new AppError('INTERNAL_ERROR', 'This function cannot run agent turns (no agentTurn in its runtime)');
  const { target } = run;
  const address = `${target.agentId}${target.alias ? `:${target.alias}` : target.version ? `:${target.version}` : ''}`;
  const started = performance.now();
  try {
    const reply = await rt.agentTurn(rt, scope, address, { message: questionOf(found.input), keyId: `eval:${run.id}`, ...turnUser(asking.user) }, AbortSignal.timeout(120_000));
    const latencyMs = performance.now() - started;
    return {
      observed: { text: reply.reply, output: reply.output, sources: sourcePaths(reply.sources), toolCalls: callsOf(reply.toolCalls), latencyMs, costUsd: costOfTokens(reply.model, reply.usage) },
      extra: { usage: reply.usage, model: reply.model, targetVersion: reply.agentVersion },
    };
  } catch (error) {
    if (!(error instanceof AppError) || error.retryable) throw error;
    return { refused: error.message, latencyMs: performance.now() - started };
  }
}

/** How long a workflow case may run (a workflow waiting for a person would never end). */
const WORKFLOW_CASE_MS = 15 * 60_000;

/**
 * A workflow's output as the scorers read it: the last step's output — its text (`text`, `reply`
 * or `answer`), its structured value (`json`, `output`, or the output itself), and the sources and
 * tool calls an agent step lists.
 */
function observedOfOutput(output: unknown): Pick<Observed, 'text' | 'output' | 'sources' | 'toolCalls'> {
  if (!isPlainObject(output)) return { text: typeof output === 'string' ? output : output === undefined || output === null ? '' : JSON.stringify(output), output: typeof output === 'string' ? undefined : output, sources: [], toolCalls: [] };
  const text = [output.text, output.reply, output.answer].find((v): v is string => typeof v === 'string');
  return {
    text: text ?? JSON.stringify(output),
    output: output.json ?? output.output ?? (text === undefined ? output : undefined),
    sources: Array.isArray(output.sources) ? sourcePaths(output.sources) : [],
    toolCalls: Array.isArray(output.toolCalls) ? callsOf(output.toolCalls) : [],
  };
}

/**
 * The case asked of a workflow: the first delivery starts an execution and sends the message
 * again, a little later, naming it; later deliveries read it until it has finished (undefined
 * meanwhile: the message was sent again). No worker waits on it, so its steps are never queued
 * behind the cases that wait for them.
 */
async function askWorkflow(rt: RuntimeWith<'queues'>, scope: TenantScope, run: StoredRun, found: Found, message: EvalCaseMessage & { requestId: string }, asking: CaseUser): Promise<Outcome | undefined> {
  const workflowId = run.target.workflowId!;
  let execution;
  if (!message.execution) {
    const parameters = isPlainObject(found.metadata?.parameters) ? found.metadata.parameters : {};
    try {
      execution = await startExecution(rt, scope, workflowId, { input: questionOf(found.input), parameters, keyId: `eval:${run.id}`, target: { alias: run.target.alias, version: run.target.version }, ...(asking.user ? { user: asking.user } : {}) });
    } catch (error) {
      if (!(error instanceof AppError) || error.retryable) throw error;
      return { refused: error.message, latencyMs: 0 };
    }
  } else {
    execution = await getExecution(rt, scope, workflowId, message.execution.id);
  }
  const polls = message.execution?.polls ?? 0;
  const startedAt = Date.parse(execution.startedAt);
  const finished = FINISHED_EXECUTION.has(execution.status);
  if (!finished && rt.clock.now() - startedAt < WORKFLOW_CASE_MS) {
    const next: EvalCaseMessage = { ...message, execution: { workflowId, id: execution.id, polls: polls + 1 } };
    await rt.queues.workflowSteps.send([next], { delaySeconds: Math.min(10, 1 + Math.floor(polls / 3)) });
    return undefined;
  }
  const latencyMs = (execution.finishedAt ? Date.parse(execution.finishedAt) : rt.clock.now()) - startedAt;
  if (execution.status !== 'succeeded') {
    const why = finished ? `execution ${execution.id} ${execution.status}${execution.error ? `: ${execution.error.message}` : ''}` : `execution ${execution.id} did not finish within ${WORKFLOW_CASE_MS / 60_000} minutes (status ${execution.status})`;
    return { refused: why, latencyMs };
  }
  // Cost: each step's model tokens at that model's price (steps that called no model cost nothing).
  const costs = Object.values(execution.steps).map((step) => {
    const out = step.output;
    return isPlainObject(out) && typeof out.model === 'string' && isPlainObject(out.usage) ? costOfTokens(out.model, out.usage as { inputTokens: number; outputTokens: number }) : 0;
  });
  return {
    observed: { ...observedOfOutput(execution.output), latencyMs, costUsd: totalCost(costs) },
    extra: { usage: execution.usage, targetVersion: execution.workflowVersion },
  };
}

/**
 * Runs one case against the run's target and scores it; undefined while a workflow case's
 * execution runs. A target that refuses the case is the case's error, not the run's.
 */
async function runCase(rt: RuntimeWith<'agentTurn' | 'queues'>, scope: TenantScope, run: StoredRun, message: EvalCaseMessage & { requestId: string }, found: Found | undefined): Promise<EvalResultRecord | undefined> {
  const { position, requestId } = message;
  if (!found) throw new AppError('UNPROCESSABLE', `Case ${position} of eval dataset ${run.datasetId} is gone`, undefined, { retryable: false });
  const base = { position, caseId: found.id, input: found.input, ...(found.expected ? { expected: found.expected } : {}), requestId, finishedAt: '' };
  const asking = await caseUser(rt, scope, found);
  const outcome = run.target.workflowId !== undefined ? await askWorkflow(rt, scope, run, found, message, asking) : await askAgent(rt, scope, run, found, asking);
  if (!outcome) return undefined;
  const noted = asking.note ? { note: asking.note } : {};
  if ('refused' in outcome) {
    return { ...base, output: '', scores: {}, passed: false, latencyMs: Math.round(outcome.latencyMs), usage: { inputTokens: 0, outputTokens: 0 }, costUsd: 0, error: outcome.refused, ...noted, finishedAt: isoNow(rt.clock) };
  }
  const { observed, extra } = outcome;
  const scores: Record<string, number | null> = {};
  const detail: Record<string, Record<string, number>> = {};
  const skipped: Record<string, string> = {};
  let judgement: Judgement | undefined;
  for (const name of run.scorers as ScorerName[]) {
    let s: Score;
    if (name === JUDGE) {
      judgement = await judgeCase(rt, run, questionOf(found.input), found.expected ?? {}, observed);
      s = judgement;
    } else {
      s = scoreCase(name, found.expected ?? {}, observed, { maxLatencyMs: run.maxLatencyMs, maxCostUsd: run.maxCostUsd });
    }
    scores[name] = s.score;
    if (s.detail) detail[name] = s.detail;
    if (s.skipped) skipped[name] = s.skipped;
  }
  const passed = Object.entries(scores).every(([name, score]) => score === null || score >= (run.thresholds[name] ?? 1));
  return {
    ...base,
    output: observed.text.slice(0, 20_000),
    scores,
    ...(Object.keys(detail).length > 0 ? { detail } : {}),
    ...(Object.keys(skipped).length > 0 ? { skipped } : {}),
    passed,
    latencyMs: Math.round(observed.latencyMs * 10) / 10,
    costUsd: observed.costUsd,
    ...extra,
    ...noted,
    ...(judgement ? { judge: { ...(judgement.reasoning ? { reasoning: judgement.reasoning } : {}), model: judgement.model, usage: judgement.usage, costUsd: costOfTokens(judgement.model, judgement.usage) } } : {}),
    finishedAt: isoNow(rt.clock),
  };
}

/** llm_judge on one reply; a judge that cannot be used now (its provider unconfigured since the run started) leaves the case unscored. */
async function judgeCase(rt: Runtime, run: StoredRun, question: string, expected: Record<string, unknown>, observed: Observed): Promise<Judgement> {
  try {
    const model = await judgeModel(rt, run.judge!);
    return await judgeReply(model, run.judge!, question, expected, observed, AbortSignal.timeout(120_000), rt.clock.now());
  } catch (error) {
    if (!(error instanceof AppError) || error.retryable) throw error;
    return { score: null, skipped: `the judge could not grade: ${error.message}`, model: run.judge!.model, usage: { inputTokens: 0, outputTokens: 0 } };
  }
}

const percentile = (sorted: number[], p: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!);

/** The run's summary from its results (and its comparison's). */
async function summaryOf(rt: Runtime, scope: TenantScope, run: StoredRun): Promise<z.infer<typeof summaryShape>> {
  const results = await rt.store.evalResults.allResults(scope, run.id);
  const scores: Record<string, number | null> = {};
  const scored: Record<string, number> = {};
  for (const name of run.scorers) {
    const values = results.flatMap((r) => (typeof r.scores[name] === 'number' ? [r.scores[name]] : []));
    scored[name] = values.length;
    scores[name] = values.length === 0 ? null : Math.round((values.reduce((a, b) => a + b, 0) / values.length) * 1e4) / 1e4;
  }
  const failedThresholds = Object.entries(run.thresholds).flatMap(([scorer, min]) => (scores[scorer] === null || scores[scorer]! < min ? [{ scorer, min, mean: scores[scorer] ?? null }] : []));
  const regressions: string[] = [];
  const improvements: string[] = [];
  if (run.compareTo) {
    const before = new Map((await rt.store.evalResults.allResults(scope, run.compareTo)).map((r) => [r.caseId, r.passed]));
    for (const r of results) {
      const was = before.get(r.caseId);
      if (was === true && !r.passed) regressions.push(r.caseId);
      if (was === false && r.passed) improvements.push(r.caseId);
    }
  }
  const latencies = results.map((r) => r.latencyMs).sort((a, b) => a - b);
  return {
    cases: results.length,
    scores,
    scored,
    passed: failedThresholds.length === 0 && regressions.length === 0,
    failedThresholds,
    casesPassed: results.filter((r) => r.passed).length,
    errors: results.filter((r) => r.error !== undefined).length,
    regressions,
    improvements,
    usage: {
      inputTokens: results.reduce((s, r) => s + r.usage.inputTokens, 0),
      outputTokens: results.reduce((s, r) => s + r.usage.outputTokens, 0),
      costUsd: totalCost(results.map((r) => r.costUsd)),
    },
    ...(run.judge
      ? {
          judgeUsage: {
            inputTokens: results.reduce((s, r) => s + (r.judge?.usage.inputTokens ?? 0), 0),
            outputTokens: results.reduce((s, r) => s + (r.judge?.usage.outputTokens ?? 0), 0),
            costUsd: totalCost(results.map((r) => r.judge?.costUsd ?? 0)),
          },
        }
      : {}),
    latencyMs: { p50: percentile(latencies, 50), p95: percentile(latencies, 95) },
  };
}

/**
 * One case of a run, from the steps queue: run and scored once (a repeated delivery finds its
 * result counted), then the case `concurrency` after it sent — each of the run's first cases
 * starts such a chain, so `concurrency` cases are in flight with no counter to claim from. The
 * last case of a chain looks whether the run is done and sums it up.
 */
export async function consumeEvalCase(rt: RuntimeWith<'agentTurn' | 'queues'>, message: EvalCaseMessage, delivery: Delivery): Promise<void> {
  const scope = scopeOf(message.tenantId);
  // The run and the case read together (messages before the dataset travelled with them read the case after).
  const [run, preread] = await Promise.all([runs.find(rt, scope, message.runId), message.datasetId ? rt.store.evalCases.getCase(scope, message.datasetId, message.position) : undefined]);
  if (!run || FINISHED.has(run.status)) return;
  // A workflow case's later deliveries keep the trace its first one started.
  const requestId = message.requestId ?? newId('request', rt.clock.now());
  // Each case is a trace of its own, reached by its result's requestId (not a branch of the run's start).
  await inSpan(`eval.case ${message.position}`, { kind: SpanKind.CONSUMER, root: true, attributes: { 'cairn.tenant.id': message.tenantId, 'cairn.request.id': requestId, 'cairn.eval.run.id': run.id, 'cairn.eval.case.position': message.position } }, async () => {
    if (run.status === 'queued') await runs.update(rt, scope, run.id, (r) => (r.status === 'queued' ? { ...r, status: 'running', startedAt: isoNow(rt.clock) } : r));
    // Only a redelivery can find its case counted (each position is sent once): a first delivery need not look.
    if (!(delivery.receiveCount > 1 && (await rt.store.evalResults.has(scope, run.id, message.position)))) {
      let result: EvalResultRecord | undefined;
      try {
        const found = message.datasetId === run.datasetId ? preread : await rt.store.evalCases.getCase(scope, run.datasetId, message.position);
        result = await runCase(rt, scope, run, { ...message, requestId }, found);
      } catch (error) {
        // Retried by the queue; on its last delivery the case is recorded as failed, so the run still ends.
        if (delivery.receiveCount < delivery.maxReceives) throw error;
        const found = await rt.store.evalCases.getCase(scope, run.datasetId, message.position);
        result = { position: message.position, caseId: found?.id ?? `position ${message.position}`, input: found?.input ?? null, output: '', scores: {}, passed: false, requestId, latencyMs: 0, usage: { inputTokens: 0, outputTokens: 0 }, costUsd: 0, error: error instanceof AppError ? error.message : 'The case failed on every delivery', finishedAt: isoNow(rt.clock) };
      }
      // A workflow case still running: its message was sent again, and comes back.
      if (!result) return;
      // Recorded by another delivery meanwhile: that one sends the chain on.
      if (!(await rt.store.evalResults.record(scope, run.id, result))) return;
    }
    // Here the case is counted: by this delivery, or by one that may have stopped before sending the
    // next (a redelivery sends it again; a case sent twice is counted once, and only its first count goes on).
    const next = message.position + run.concurrency;
    if (next <= run.total) return send(rt, scope, run, [next]);
    const progress = await rt.store.evalResults.progress(scope, run.id);
    if (progress && progress.done >= run.total) await finish(rt, scope, run.id);
  });
}

/** Sums a run up once all its cases are counted (two workers may both try: the first write wins). */
async function finish(rt: Runtime, scope: TenantScope, runId: string) {
  const run = await runs.get(rt, scope, runId);
  if (FINISHED.has(run.status)) return;
  const summary = await summaryOf(rt, scope, run);
  const status = summary.errors === summary.cases ? 'failed' : 'completed';
  await runs.update(rt, scope, runId, (r) => (FINISHED.has(r.status) ? r : { ...r, status, summary, finishedAt: isoNow(rt.clock) }));
  log.info('eval run finished', { tenantId: scope.tenantId, runId, status, passed: summary.passed, cases: summary.cases });
}
