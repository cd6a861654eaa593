/**
 * `npm run bench` (fifth part): the platform API against DynamoDB Local. Latency p50/p95 and
 * DynamoDB requests of db/ops (get, a filtered query, a count over 2,000 rows), of memory queries
 * (a user with 10 turns and one with 300), and what recording memory adds to a converse turn —
 * each next to the cheapest authenticated call (GET /platform/login/session) measured in the same
 * run. Writes bench/results/platform.json.
 */
import { benchApp, mean, percentile, rng, runBench, startBenchServices, writeResults } from './common';

const RUNS = Number(process.env.BENCH_PLATFORM_RUNS ?? 200);

const FACTS = [
  (r: () => number) => `I prefer ${['express', 'standard', 'overnight', 'economy'][Math.floor(r() * 4)]} shipping.`,
  (r: () => number) => `I live in ${['Portland', 'Berlin', 'Lisbon', 'Osaka', 'Lagos'][Math.floor(r() * 5)]}.`,
  (r: () => number) => `I like ${['green tea', 'dark chocolate', 'hiking boots', 'jazz records'][Math.floor(r() * 4)]}.`,
  (r: () => number) => `My favorite color is ${['green', 'blue', 'red'][Math.floor(r() * 3)]}.`,
  (r: () => number) => `I bought an iPhone ${12 + Math.floor(r() * 4)} on March ${1 + Math.floor(r() * 27)}, 2026 for $${200 + Math.floor(r() * 900)}.`,
  () => 'How long do I have to return an item?',
  () => 'Can you tell me about your refund policy and delivery times?',
];

async function main() {
  const services = await startBenchServices('cairn-bench');
  const { app, call, scope, rt } = await benchApp('ten_platformbench');
  const { issueAccessToken } = await import('../shared/platform/tenants');
  const { dynamoTotals } = await import('../shared/store/request-metrics');
  const { recordEpisode } = await import('../shared/memory/record-episode');
  const { accessToken } = await issueAccessToken(rt, scope);
  const pcall = async (method: string, path: string, body?: unknown) => {
    const res = await app.request(`http://localhost${path}`, {
      method,
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status !== 200 && res.status !== 201) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { data: Record<string, unknown> };
  };

  /** Latency and DynamoDB requests of `fn`, after ten warm-up calls. */
  async function measure(fn: (i: number) => Promise<unknown>, runs = RUNS) {
    const times: number[] = [];
    const requests: number[] = [];
    for (let i = 0; i < runs + 10; i++) {
      const before = dynamoTotals().dynamoRequests;
      const t0 = performance.now();
      await fn(i);
      if (i < 10) continue;
      times.push(performance.now() - t0);
      requests.push(dynamoTotals().dynamoRequests - before);
    }
    return { p50Ms: percentile(times, 0.5), p95Ms: percentile(times, 0.95), meanMs: mean(times), dynamoRequestsPerCall: mean(requests) };
  }

  const random = rng(7);
  for (let i = 0; i < 2000; i += 25) {
    await Promise.all(
      Array.from({ length: 25 }, (_, j) =>
        pcall('POST', '/platform/db/ops', { operation: 'put', table: 'records', item: { collection: 'orders', id: `o${String(i + j).padStart(5, '0')}`, data: { total: Math.floor(random() * 1000), status: random() < 0.1 ? 'open' : 'closed' } } }),
      ),
    );
  }

  const baseline = await measure(() => pcall('GET', '/platform/login/session'));
  const get = await measure((i) => pcall('POST', '/platform/db/ops', { operation: 'get', table: 'records', key: { collection: 'orders', id: `o${String(i % 2000).padStart(5, '0')}` } }));
  const query = await measure(() => pcall('POST', '/platform/db/ops', { operation: 'query', table: 'records', where: { collection: 'orders', 'data.status': 'open', 'data.total': { gte: 500 } }, limit: 20 }));
  const count = await measure(() => pcall('POST', '/platform/db/ops', { operation: 'count', table: 'records', where: { collection: 'orders', 'data.status': 'open' } }), 50);

  // Conversations: 20 users × 10 turns, recorded into memory as they happen.
  const agent = await call('POST', '/v1/agents', { name: 'Shop', model: 'local/extractive' });
  const turns = Array.from({ length: 200 }, (_, i) => ({ user: `user${i % 20}`, text: FACTS[Math.floor(random() * FACTS.length)]!(random) }));
  const converse = await measure((i) => {
    const t = turns[i % turns.length]!;
    return call('POST', `/v1/agents/${agent.data.id}/converse`, { message: t.text, context: { userId: t.user, sessionId: `${t.user}-s${Math.floor(i / 40)}` } });
  }, 200);
  // The same turns recorded straight into memory (what converse spends on it).
  const recording = await measure((i) => {
    const t = turns[i % turns.length]!;
    return recordEpisode(rt, scope, { agentId: agent.data.id, userId: `rec-${t.user}`, sessionId: 's1', text: t.text, reply: 'ok', at: new Date() });
  }, 200);

  // A heavy user: 300 turns of memory.
  for (let i = 0; i < 300; i++) {
    await recordEpisode(rt, scope, { agentId: agent.data.id, userId: 'heavy', sessionId: `h${Math.floor(i / 20)}`, text: FACTS[i % FACTS.length]!(random), reply: 'ok', at: new Date() });
  }
  const memoryLight = await measure(() => pcall('POST', '/platform/memory/query', { agentId: agent.data.id, userId: 'user3', query: 'which shipping do I prefer?' }));
  const memoryHeavy = await measure(() => pcall('POST', '/platform/memory/query', { agentId: agent.data.id, userId: 'heavy', query: 'which shipping do I prefer?', depth: 2 }), 100);
  const heavyResult = await pcall('POST', '/platform/memory/query', { agentId: agent.data.id, userId: 'heavy', query: 'which shipping do I prefer?' });

  const ratio = (m: { p50Ms: number }) => Math.round((m.p50Ms / baseline.p50Ms) * 100) / 100;
  const results = {
    when: new Date().toISOString(),
    runs: RUNS,
    note: 'DynamoDB Local on a shared 2-core machine; ratios are p50 against the baseline in the same run.',
    baseline: { call: 'GET /platform/login/session (token check + revocation read)', ...baseline },
    dbOps: {
      get: { ...get, xBaseline: ratio(get) },
      query: { description: '20 of 2,000 records by two data.* conditions (~5% match)', ...query, xBaseline: ratio(query) },
      count: { description: 'count over 2,000 records', ...count, xBaseline: ratio(count) },
    },
    memory: {
      converseTurn: { description: 'converse, built-in engine, memory recorded', ...converse },
      recordingOnly: { description: 'recordEpisode alone for the same turns', ...recording, shareOfConverseP50: Math.round((recording.p50Ms / converse.p50Ms) * 100) / 100 },
      queryUserWith10Turns: { ...memoryLight, xBaseline: ratio(memoryLight) },
      queryUserWith300Turns: { ...memoryHeavy, xBaseline: ratio(memoryHeavy), nodes: (heavyResult.data.nodes as unknown[]).length, firstFact: (heavyResult.data.edges as Array<{ fact: string }>)[0]?.fact },
    },
  };
  writeResults('platform', results);
  await services.stop();
}

runBench(main);
