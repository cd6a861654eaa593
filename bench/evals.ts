/**
 * `npm run bench` (evaluations): a 1,000-case run against a grounded agent on the built-in engine
 * (1,000 CISI documents), through local mode's steps queue (4 workers) with the run's concurrency
 * at 8: wall time, cases per second, the agent turn's own time per case, the time per case beyond
 * it (each case's trace less its turn; and the wall time per case less the turns' share), and
 * DynamoDB requests per case beside those of the same turn conversed directly. Writes bench/results/evals.json.
 */
import { benchApp, cisi, mean, percentile, runBench, startBenchServices, writeResults } from './common';

const CASES = Number(process.env.BENCH_EVAL_CASES ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_EVAL_CONCURRENCY ?? 8);
/** Local mode's steps queue runs this many messages at once (local/local-runtime.ts). */
const WORKERS = 4;

async function main() {
  const services = await startBenchServices('cairn-bench-evals');
  const { call, rt, local } = await benchApp('ten_evalbench');
  const { dynamoTotals } = await import('../shared/store/request-metrics');

  const { corpus, queries } = cisi();
  const files = corpus.slice(0, 1000).map((d, i) => ({ path: `docs/${i}.txt`, content: `${d.title}\n\n${d.text}` }));
  const source = await call('POST', '/v1/knowledge-sources', { name: 'cisi', type: 'file-collection', files });
  await call('POST', `/v1/knowledge-sources/${source.data.id}/connect`, {});
  await local.ingestion!.drain();
  const agent = await call('POST', '/v1/agents', { name: 'CISI', model: 'local/extractive', capabilities: ['chat', 'document-search'], knowledgeSourceIds: [source.data.id] });

  // The agent turn alone: timed where the worker calls it.
  const turnMs: number[] = [];
  const agentTurn = rt.agentTurn!;
  Object.assign(rt, {
    agentTurn: async (...args: Parameters<typeof agentTurn>) => {
      const t0 = performance.now();
      try {
        return await agentTurn(...args);
      } finally {
        turnMs.push(performance.now() - t0);
      }
    },
  });

  // The same turns conversed directly: DynamoDB requests of the turn itself.
  const direct: number[] = [];
  for (let i = 0; i < 50; i++) {
    const before = dynamoTotals().dynamoRequests;
    await call('POST', `/v1/agents/${agent.data.id}/converse`, { message: queries[i % queries.length] });
    direct.push(dynamoTotals().dynamoRequests - before);
  }

  const cases = Array.from({ length: CASES }, (_, i) => ({ input: queries[i % queries.length]!, expected: { refuses: false } }));
  const dataset = await call('POST', '/v1/eval-datasets', { name: 'CISI questions', cases });
  turnMs.length = 0;
  const before = dynamoTotals().dynamoRequests;
  const t0 = performance.now();
  const started = await call('POST', '/v1/eval-runs', { datasetId: dataset.data.id, target: { agentId: agent.data.id }, scorers: ['refusal', 'latency'], maxLatencyMs: 5000, concurrency: CONCURRENCY });
  let run = started.data;
  while (run.status === 'queued' || run.status === 'running') {
    // Polled once a second: each poll is a trace too, and the process keeps the last 1,000.
    await new Promise((r) => setTimeout(r, 1000));
    run = (await call('GET', `/v1/eval-runs/${started.data.id}`)).data;
  }
  const wallMs = performance.now() - t0;
  if (run.status !== 'completed') throw new Error(`run ended ${String(run.status)}`);
  const requests = dynamoTotals().dynamoRequests - before;
  const turn = mean(turnMs);
  // A case's own time: its trace's root span (eval.case), from the worker taking it to its result,
  // next case and count written. Less the turn, that is what evaluating adds to each case.
  // (Read from the process's trace store: fetching them over HTTP would make traces that push them out.)
  const caseMs: number[] = [];
  let cursor: string | null = null;
  do {
    const page = (await call('GET', `/v1/eval-runs/${started.data.id}/results?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)) as unknown as { data: Array<{ requestId: string }>; meta: { pagination: { nextCursor: string | null } } };
    for (const result of page.data) {
      const root = rt.traces?.byRequestId(result.requestId)?.spans.find((s) => s.name.startsWith('eval.case'));
      if (root) caseMs.push(root.durationMs);
    }
    cursor = page.meta.pagination.nextCursor;
  } while (cursor);
  const results = {
    date: new Date().toISOString(),
    node: process.version,
    cases: CASES,
    concurrency: CONCURRENCY,
    workers: WORKERS,
    wallSeconds: Math.round(wallMs / 100) / 10,
    casesPerSecond: Math.round((CASES / (wallMs / 1000)) * 10) / 10,
    turnMs: { mean: turn, p50: percentile(turnMs, 0.5), p95: percentile(turnMs, 0.95) },
    caseMs: { mean: mean(caseMs), p50: percentile(caseMs, 0.5), p95: percentile(caseMs, 0.95), traced: caseMs.length },
    /** What evaluating adds to a case beyond its agent turn: the case's span less the turn (target: ≤ 20 ms). */
    beyondTurnMsPerCase: Math.round((mean(caseMs) - turn) * 10) / 10,
    /** The wall time per case beyond the turns' share of it (turns overlap WORKERS at a time): queue hand-offs included. */
    wallBeyondTurnMsPerCase: Math.round((wallMs / CASES - turn / WORKERS) * 10) / 10,
    dynamoRequestsPerCase: Math.round((requests / CASES) * 10) / 10,
    dynamoRequestsPerDirectTurn: mean(direct),
    summary: run.summary,
  };
  writeResults('evals', results);
  await services.stop();
}

runBench(main);
