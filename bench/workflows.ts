/**
 * `npm run bench` (fourth part): the three-step seed workflow (classification → search →
 * generation) end to end through the local queue with the built-in engine: latency p50/p95, time
 * outside the model per step (queue + store), queue messages and DynamoDB requests per execution.
 * Then a 100-item `map` (items per second, queue messages and DynamoDB requests per item) and the
 * README's worked example, "refund request", on its path without a person (a shop API on this
 * machine; latency p50/p95). Writes bench/results/workflows.json.
 */
import './allow-local-tools';
import { createServer } from 'node:http';
import { benchApp, cisi, countSent, mean, percentile, runBench, startBenchServices, supportFlow, timeLocalModel, writeResults } from './common';

const RUNS = Number(process.env.BENCH_WORKFLOW_RUNS ?? 100);

async function main() {
  const services = await startBenchServices('cairn-bench');
  const { call, local } = await benchApp('ten_workflowbench');
  const { dynamoTotals } = await import('../shared/store/request-metrics');
  // Count the messages the steps send through the queue.
  const sentMessages = countSent(local.workflowSteps!);

  const { corpus, queries } = cisi();
  const files = corpus.slice(0, 1000).map((d, i) => ({ path: `docs/${i}.txt`, content: `${d.title}\n\n${d.text}` }));
  const source = await call('POST', '/v1/knowledge-sources', { name: 'cisi', type: 'file-collection', files });
  await call('POST', `/v1/knowledge-sources/${source.data.id}/connect`, {});
  await local.ingestion!.drain();
  const workflow = await call('POST', '/v1/workflows', supportFlow(source.data.id));

  const modelTime = await timeLocalModel();

  const total: number[] = [];
  const stepOverhead: number[] = [];
  const requests: number[] = [];
  const sent: number[] = [];
  const modelPerRun: number[] = [];
  for (let i = 0; i < RUNS + 10; i++) {
    const before = { model: modelTime(), dynamo: dynamoTotals().dynamoRequests, messages: sentMessages() };
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
    sent.push(sentMessages() - before.messages);
  }
  // ── a 100-item map: one message per item, at most 10 at once ──
  const MAP_RUNS = Number(process.env.BENCH_MAP_RUNS ?? 5);
  const map = await call('POST', '/v1/workflows', {
    name: 'map of 100',
    steps: [
      { id: 'each', type: 'map', items: '[1..100]', concurrency: 10, steps: [{ id: 'square', type: 'transform', expression: '{ "n": item, "square": item * item }' }] },
      { id: 'sum', type: 'transform', expression: '$sum(steps.each.output.results.square)' },
    ],
  });
  const mapRuns: Array<{ ms: number; messages: number; requests: number }> = [];
  for (let i = 0; i < MAP_RUNS + 1; i++) {
    const before = { dynamo: dynamoTotals().dynamoRequests, messages: sentMessages() };
    const t0 = performance.now();
    const res = await call('POST', `/v1/workflows/${map.data.id}/execute`, {});
    const elapsed = performance.now() - t0;
    if (res.data.status !== 'succeeded') throw new Error(`map execution ended ${String(res.data.status)}`);
    if (i === 0) continue; // warm-up
    mapRuns.push({ ms: elapsed, messages: sentMessages() - before.messages, requests: dynamoTotals().dynamoRequests - before.dynamo });
  }
  const mapMs = percentile(mapRuns.map((r) => r.ms), 0.5);

  // ── the worked example without the person: classify → http → condition → (no human) → transform → agent ──
  const shop = createServer((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: req.url!.split('/').pop(), amount: 35, currency: 'EUR' })));
  await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
  const base = `http://localhost:${(shop.address() as { port: number }).port}`;
  const agent = await call('POST', '/v1/agents', { name: 'Refunds desk', model: 'gpt-4', instructions: 'Reply to customers about refunds, briefly.' });
  const refund = await call('POST', '/v1/workflows', {
    name: 'Refund request',
    steps: [
      { id: 'route', type: 'classification', model: 'local/lexical', categories: [{ name: 'refund', description: 'refund money back charged twice return reimburse' }, { name: 'other', description: 'question information opening hours' }] },
      { id: 'order', type: 'http', url: `${base}/orders/{{parameters.orderId}}`, dependsOn: ['route'], when: { step: 'route', category: 'refund' } },
      { id: 'large', type: 'condition', expression: 'steps.order.output.body.amount > 100', then: ['approve'] },
      { id: 'approve', type: 'human', dependsOn: ['large'], prompt: 'Refund {{steps.order.output.body.amount}} EUR?', schema: { type: 'object', properties: { approved: { type: 'boolean' } }, required: ['approved'] } },
      { id: 'decision', type: 'transform', dependsOn: ['large', 'approve'], expression: 'steps.large.output.result = false or steps.approve.output.approved = true' },
      { id: 'reply', type: 'agent', agentId: agent.data.id, dependsOn: ['decision'], message: 'Tell the customer whether their refund for order {{parameters.orderId}} is approved ({{steps.decision.output}}). They wrote: {{input}}' },
    ],
  });
  const refundMs: number[] = [];
  for (let i = 0; i < 30 + 5; i++) {
    const t0 = performance.now();
    const res = await call('POST', `/v1/workflows/${refund.data.id}/execute`, { input: 'I was charged twice, please refund me', parameters: { orderId: `A${i}` } });
    const elapsed = performance.now() - t0;
    if (res.data.status !== 'succeeded') throw new Error(`refund execution ended ${String(res.data.status)}`);
    if (i >= 5) refundMs.push(elapsed);
  }
  shop.close();

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
    map100: {
      runs: mapRuns.length,
      concurrency: 10,
      latencyMs: { p50: mapMs, max: Math.max(...mapRuns.map((r) => r.ms)) },
      itemsPerSecond: 100 / (mapMs / 1000),
      queueMessagesPerItem: mean(mapRuns.map((r) => r.messages)) / 100,
      dynamoRequestsPerItem: mean(mapRuns.map((r) => r.requests)) / 100,
    },
    refundExampleWithoutPerson: { runs: refundMs.length, steps: 6, latencyMs: { p50: percentile(refundMs, 0.5), p95: percentile(refundMs, 0.95), mean: mean(refundMs) } },
  };
  writeResults('workflows', results);
  await services.stop();
}

runBench(main);
