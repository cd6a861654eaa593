/**
 * `npm run bench` (fourth part): the three-step seed workflow (classification → search →
 * generation) end to end through the local queue with the built-in engine: latency p50/p95, time
 * outside the model per step (queue + store), queue messages and DynamoDB requests per execution.
 * Writes bench/results/workflows.json.
 */
import { benchApp, cisi, mean, percentile, runBench, startBenchServices, timeLocalModel, writeResults } from './common';

const RUNS = Number(process.env.BENCH_WORKFLOW_RUNS ?? 100);

async function main() {
  const services = await startBenchServices('cairn-bench');
  const { call, local } = await benchApp('ten_workflowbench');
  const { dynamoTotals } = await import('../shared/store/request-metrics');
  // Count the messages the steps send through the queue.
  let messages = 0;
  const steps = local.workflowSteps!;
  const send = steps.send.bind(steps);
  steps.send = async (m, o) => {
    messages += m.length;
    await send(m, o);
  };

  const { corpus, queries } = cisi();
  const files = corpus.slice(0, 1000).map((d, i) => ({ path: `docs/${i}.txt`, content: `${d.title}\n\n${d.text}` }));
  const source = await call('POST', '/v1/knowledge-sources', { name: 'cisi', type: 'file-collection', files });
  await call('POST', `/v1/knowledge-sources/${source.data.id}/connect`, {});
  await local.ingestion!.drain();
  const workflow = await call('POST', '/v1/workflows', {
    name: 'Customer support flow',
    steps: [
      { type: 'classification', config: { model: 'gpt-4', categories: ['retrieval', 'classification', 'indexing', 'other'] } },
      { type: 'search', knowledgeSourceId: source.data.id, query: '{{user_message}}' },
      { type: 'generation', config: { model: 'gpt-4', prompt: 'Answer: {{user_message}}' } },
    ],
  });

  const modelTime = await timeLocalModel();

  const total: number[] = [];
  const stepOverhead: number[] = [];
  const requests: number[] = [];
  const sent: number[] = [];
  const modelPerRun: number[] = [];
  for (let i = 0; i < RUNS + 10; i++) {
    const before = { model: modelTime(), dynamo: dynamoTotals().dynamoRequests, messages };
    const t0 = performance.now();
    const res = await call('POST', `/v1/workflows/${workflow.data.id}/execute`, { input: queries[i % queries.length] });
    const elapsed = performance.now() - t0;
    if (res.data.status !== 'succeeded') throw new Error(`execution ended ${String(res.data.status)}`);
    if (i < 10) continue; // warm-up
    total.push(elapsed);
    // Per step, outside the steps' own work (model, search): queue hops, claims and settles in the
    // store, and the synchronous execute's polling.
    const stepsMs = (res.data.steps as Array<{ durationMs: number }>).reduce((s, st) => s + st.durationMs, 0);
    stepOverhead.push((elapsed - stepsMs) / 3);
    modelPerRun.push(modelTime() - before.model);
    requests.push(dynamoTotals().dynamoRequests - before.dynamo);
    sent.push(messages - before.messages);
  }
  const results = {
    date: new Date().toISOString(),
    node: process.version,
    runs: total.length,
    chunks: 1000,
    latencyMs: { p50: percentile(total, 0.5), p95: percentile(total, 0.95), mean: mean(total) },
    perStepOverheadOutsideStepWorkMs: { mean: mean(stepOverhead), p95: percentile(stepOverhead, 0.95) },
    modelMsPerExecution: mean(modelPerRun),
    queueMessagesPerExecution: mean(sent),
    dynamoRequestsPerExecution: mean(requests),
  };
  writeResults('workflows', results);
  await services.stop();
}

runBench(main);
