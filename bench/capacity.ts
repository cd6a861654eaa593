/**
 * `npm run bench` (capacity): the per-operation figures docs/capacity.md scales up, and the load run
 * that checks them.
 * 1. The model: each operation of a realistic mix run alone, one after another, over the 76 CISI
 *    questions, once cold and once warm (the model): DynamoDB read and write units and requests,
 *    queue messages, milliseconds in process. Local mode's queues live in DynamoDB: their units are
 *    left out (SQS in AWS). Ingestion's units per
 *    chunk come from indexing 1,000 files here.
 * 2. The check: the same mix at the highest concurrency this machine sustains. An API operation's
 *    units are counted in its own request; a workflow's steps run in the queue's workers, so theirs
 *    are what the whole run consumed beyond the API operations'. The model holds when each
 *    operation's mean units are within 10% of the model's, and so does the run's total.
 * 3. The model scaled to 1k, 100k and 10M requests a day with on-demand list prices.
 * Writes bench/results/capacity.json.
 */
import { benchApp, cisi, countSent, runBench, startBenchServices, supportFlow, writeResults } from './common';

/** The mix: share of requests per operation (docs/capacity.md says why these). */
const MIX = { converse: 0.4, search: 0.2, get: 0.25, create: 0.05, workflow: 0.1 } as const;
type Operation = keyof typeof MIX;
const LOAD_OPERATIONS = Number(process.env.BENCH_CAPACITY_OPERATIONS ?? 2000);
const CONCURRENCY = 16;

/**
 * On-demand list prices (us-east-1, USD) used to turn units into money; check AWS's pricing pages
 * before relying on them. A read request unit is one strongly consistent read of 4 KB (two
 * eventually consistent), which is what DynamoDB reports as consumed capacity.
 */
const PRICES = {
  dynamoReadPerMillion: 0.125,
  dynamoWritePerMillion: 0.625,
  lambdaPerGbSecond: 0.0000166667,
  lambdaPerMillionInvocations: 0.2,
  apiGatewayPerMillion: 3.5,
  /** Each message is sent, received and deleted: three requests. */
  sqsPerMillionRequests: 0.4,
};
/** Memory of the function that serves each operation (infra/stacks/api-stack.ts), and of the steps worker. */
const API_MEMORY_GB = 0.5;
const STEPS_MEMORY_GB = 1;

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

async function main() {
  const services = await startBenchServices('cairn-capacity');
  const { call, app, rt, scope, local } = await benchApp('ten_capacity');
  // An enterprise key, so every request takes from its rate-limit counters as a customer's would.
  const { apiKey } = await rt.store.apiKeys.createApiKey(scope, { plan: 'enterprise' });
  const { dynamoTotals, withDynamoCounters } = await import('../shared/store/request-metrics');
  const { corpus, queries } = cisi();

  // Queue messages, counted where they are sent.
  const sentSteps = countSent(local.workflowSteps!);
  const sentIngestion = countSent(local.ingestion!);

  // Local mode's queues keep their messages in DynamoDB; in AWS they are SQS's. Their units are
  // counted apart and left out of every figure.
  const queueUnits = { read: 0, write: 0 };
  const queueStore = rt.store.queueMessages as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const name of ['send', 'peek', 'move', 'remove', 'deadLetter', 'pending'] as const) {
    const real = queueStore[name]!.bind(queueStore);
    queueStore[name] = async (...args: unknown[]) => {
      const { result, counters } = withDynamoCounters(() => real(...args));
      try {
        return await result;
      } finally {
        queueUnits.read += counters.readUnits;
        queueUnits.write += counters.writeUnits;
      }
    };
  }
  /** DynamoDB's totals without the local queues' share. */
  const storeTotals = () => {
    const t = dynamoTotals();
    return { readUnits: t.readUnits - queueUnits.read, writeUnits: t.writeUnits - queueUnits.write, capacityUnits: t.capacityUnits - queueUnits.read - queueUnits.write, dynamoRequests: t.dynamoRequests };
  };

  // A source of 1,000 CISI documents (its ingestion measured), an agent grounded in it, a workflow.
  const files = corpus.slice(0, 1000).map((d, i) => ({ path: `docs/${i}.txt`, content: `${d.title}\n\n${d.text}` }));
  const source = await call('POST', '/v1/knowledge-sources', { name: 'cisi', type: 'file-collection', files });
  const ingestBefore = { ...storeTotals(), messages: sentIngestion() };
  await call('POST', `/v1/knowledge-sources/${source.data.id}/connect`, {});
  await local.ingestion!.drain();
  const indexed = (await call('GET', `/v1/knowledge-sources/${source.data.id}`)).data as unknown as { stats: { chunks: number } };
  const ingestAfter = storeTotals();
  const ingestion = {
    chunks: indexed.stats.chunks,
    readUnitsPerChunk: round((ingestAfter.readUnits - ingestBefore.readUnits) / indexed.stats.chunks),
    writeUnitsPerChunk: round((ingestAfter.writeUnits - ingestBefore.writeUnits) / indexed.stats.chunks),
    messagesPerSync: sentIngestion() - ingestBefore.messages,
  };
  const agent = await call('POST', '/v1/agents', { name: 'Helper', model: 'gpt-4', capabilities: ['chat', 'document-search'], knowledgeSourceIds: [source.data.id] });
  const plain = await call('POST', '/v1/agents', { name: 'Support bot', model: 'gpt-4' });
  const workflow = await call('POST', '/v1/workflows', supportFlow(source.data.id));

  // One operation of each kind; a conversation goes on for four turns in its session.
  let turn = 0;
  let session: string | undefined;
  const request = async (method: string, path: string, body?: unknown) => {
    const res = await app.request(`http://localhost${path}`, { method, headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const out = (await res.json()) as { data: Record<string, unknown> };
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(out)}`);
    return out.data;
  };
  const run: Record<Operation, (i: number) => Promise<unknown>> = {
    converse: async (i) => {
      if (turn++ % 4 === 0) session = undefined;
      const reply = await request('POST', `/v1/agents/${agent.data.id}/converse`, { message: queries[i % queries.length], ...(session ? { context: { sessionId: session } } : {}) });
      session = String(reply.sessionId);
    },
    search: (i) => request('POST', `/v1/knowledge-sources/${source.data.id}/search`, { query: queries[i % queries.length], topK: 5 }),
    get: () => request('GET', `/v1/agents/${plain.data.id}`),
    create: (i) => request('POST', '/v1/agents', { name: `Agent ${i}`, model: 'gpt-4', instructions: 'Answer briefly.' }),
    workflow: async (i) => {
      const done = await request('POST', `/v1/workflows/${workflow.data.id}/execute`, { input: queries[i % queries.length] });
      if (done.status !== 'succeeded') throw new Error(`workflow ended ${String(done.status)}`);
    },
  };
  const operations = Object.keys(MIX) as Operation[];

  // 1. The model: each operation alone over every question, twice: the first pass from cold caches
  // (a new instance), the second warm (an instance's steady state, which the model takes).
  const measureAlone = async (op: Operation) => {
    const before = { ...storeTotals(), messages: sentSteps() };
    const started = performance.now();
    for (let i = 0; i < queries.length; i++) await run[op](i);
    const after = storeTotals();
    const n = queries.length;
    return {
      readUnits: round((after.readUnits - before.readUnits) / n),
      writeUnits: round((after.writeUnits - before.writeUnits) / n),
      requests: round((after.dynamoRequests - before.dynamoRequests) / n, 1),
      messages: round((sentSteps() - before.messages) / n, 1),
      ms: round((performance.now() - started) / n, 1),
    };
  };
  const cold = {} as Record<Operation, Awaited<ReturnType<typeof measureAlone>>>;
  const model = {} as Record<Operation, Awaited<ReturnType<typeof measureAlone>>>;
  for (const op of operations) cold[op] = await measureAlone(op);
  for (const op of operations) model[op] = await measureAlone(op);

  // 2. The check: the mix, shuffled, at CONCURRENCY in flight.
  const plan: Operation[] = [];
  for (const op of operations) for (let i = 0; i < Math.round(LOAD_OPERATIONS * MIX[op]); i++) plan.push(op);
  let seed = 42;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let i = plan.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [plan[i], plan[j]] = [plan[j]!, plan[i]!];
  }
  const measured = Object.fromEntries(operations.map((op) => [op, { count: 0, readUnits: 0, writeUnits: 0 }])) as Record<Operation, { count: number; readUnits: number; writeUnits: number }>;
  const runBefore = storeTotals();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < plan.length) {
        const index = next++;
        const op = plan[index]!;
        const { result, counters } = withDynamoCounters(() => run[op](index % queries.length));
        await result;
        const m = measured[op];
        m.count++;
        m.readUnits += counters.readUnits;
        m.writeUnits += counters.writeUnits;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const runAfter = storeTotals();
  // A workflow's units are its request's and its steps' in the workers: what the run consumed beyond
  // the other operations' own (their requests send no queue messages).
  const others = operations.filter((op) => op !== 'workflow');
  const wf = measured.workflow;
  wf.readUnits = runAfter.readUnits - runBefore.readUnits - others.reduce((sum, op) => sum + measured[op].readUnits, 0);
  wf.writeUnits = runAfter.writeUnits - runBefore.writeUnits - others.reduce((sum, op) => sum + measured[op].writeUnits, 0);
  const deviation = (got: number, want: number) => round(want === 0 ? (got === 0 ? 0 : 1) : got / want - 1, 3);
  const check = Object.fromEntries(
    operations.map((op) => {
      const m = measured[op];
      const units = (m.readUnits + m.writeUnits) / m.count;
      const want = model[op].readUnits + model[op].writeUnits;
      return [op, { operations: m.count, unitsPerOperation: round(units), modelUnits: round(want), deviation: deviation(units, want) }];
    }),
  ) as Record<Operation, { operations: number; unitsPerOperation: number; modelUnits: number; deviation: number }>;
  const totalUnits = runAfter.capacityUnits - runBefore.capacityUnits;
  const predicted = operations.reduce((sum, op) => sum + measured[op].count * (model[op].readUnits + model[op].writeUnits), 0);

  // 3. Scaled: per operation and per day at three volumes.
  const perOperationUsd = Object.fromEntries(
    operations.map((op) => {
      const m = model[op];
      const gbSeconds = (m.ms / 1000) * API_MEMORY_GB + (op === 'workflow' ? (m.ms / 1000) * STEPS_MEMORY_GB : 0);
      const usd =
        (m.readUnits * PRICES.dynamoReadPerMillion + m.writeUnits * PRICES.dynamoWritePerMillion) / 1e6 +
        gbSeconds * PRICES.lambdaPerGbSecond +
        ((1 + m.messages) * PRICES.lambdaPerMillionInvocations) / 1e6 +
        PRICES.apiGatewayPerMillion / 1e6 +
        (m.messages * 3 * PRICES.sqsPerMillionRequests) / 1e6;
      return [op, { gbSeconds: round(gbSeconds, 4), usdPerMillion: round(usd * 1e6) }];
    }),
  ) as Record<Operation, { gbSeconds: number; usdPerMillion: number }>;
  const volumes = Object.fromEntries(
    [1_000, 100_000, 10_000_000].map((perDay) => {
      const day = { readUnits: 0, writeUnits: 0, gbSeconds: 0, sqsMessages: 0, usd: 0 };
      for (const op of operations) {
        const n = perDay * MIX[op];
        day.readUnits += n * model[op].readUnits;
        day.writeUnits += n * model[op].writeUnits;
        day.gbSeconds += n * perOperationUsd[op].gbSeconds;
        day.sqsMessages += n * model[op].messages;
        day.usd += (n * perOperationUsd[op].usdPerMillion) / 1e6;
      }
      const peakPerSecond = (perDay / 86_400) * 3;
      return [
        String(perDay),
        {
          perDay: { readUnits: Math.round(day.readUnits), writeUnits: Math.round(day.writeUnits), lambdaGbSeconds: Math.round(day.gbSeconds), sqsMessages: Math.round(day.sqsMessages), usd: round(day.usd) },
          perMonthUsd: round(day.usd * 30),
          peakRequestsPerSecond: round(peakPerSecond, 3),
          // Lambda instances busy at the peak: requests a second × seconds each (the mean of the mix).
          peakConcurrency: round(peakPerSecond * operations.reduce((s, op) => s + MIX[op] * (model[op].ms / 1000), 0), 3),
        },
      ];
    }),
  );

  writeResults('capacity', {
    date: new Date().toISOString(),
    node: process.version,
    mix: MIX,
    prices: PRICES,
    ingestion,
    model,
    modelCold: cold,
    perOperation: perOperationUsd,
    check: {
      operations: plan.length,
      concurrency: CONCURRENCY,
      operationsPerSecond: round(plan.length / seconds, 1),
      perOperation: check,
      totalUnits: round(totalUnits),
      predictedUnits: round(predicted),
      totalDeviation: deviation(totalUnits, predicted),
      withinTenPercent: Object.values(check).every((c) => Math.abs(c.deviation) <= 0.1) && Math.abs(deviation(totalUnits, predicted)) <= 0.1,
    },
    volumes,
  });
  await local.stop();
  await services.stop();
  process.exit(0);
}

runBench(main);
