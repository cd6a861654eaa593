/**
 * `npm run bench` (third part): converse latency with the built-in engine over a 10k-chunk
 * PostgreSQL source, and how much of it is spent outside the model (retrieval, session store,
 * envelope). Writes bench/results/converse.json.
 */
import pg from 'pg';
import { benchApp, cisi, mean, percentile, rng, runBench, startBenchServices, timeLocalModel, writeResults } from './common';

const ROWS = Number(process.env.BENCH_CONVERSE_ROWS ?? 10_000);
const TURNS = Number(process.env.BENCH_CONVERSE_TURNS ?? 200);

async function main() {
  const services = await startBenchServices('cairn-bench');
  const { call, local } = await benchApp('ten_conversebench');
  const { dynamoTotals } = await import('../shared/store/request-metrics');

  // A 10k-row table of articles made of CISI sentences.
  const { corpus, sentences, queries } = cisi();
  const t = services.postgres;
  const db = new pg.Client({ host: t.host, port: t.port, database: t.database, user: t.username, password: t.password });
  await db.connect();
  await db.query('DROP TABLE IF EXISTS converse_bench');
  await db.query('CREATE TABLE converse_bench (id integer PRIMARY KEY, title text, body text)');
  const random = rng(1);
  const ids = [], titles = [], bodies = [];
  for (let i = 0; i < ROWS; i++) {
    ids.push(i + 1);
    titles.push(corpus[Math.floor(random() * corpus.length)]!.title);
    bodies.push(Array.from({ length: 4 }, () => sentences[Math.floor(random() * sentences.length)]).join(' '));
  }
  await db.query('INSERT INTO converse_bench SELECT * FROM unnest($1::int[], $2::text[], $3::text[])', [ids, titles, bodies]);
  await db.end();
  const source = await call('POST', '/v1/knowledge-sources', { name: 'bench', type: 'postgresql', config: { host: t.host, port: t.port, database: t.database, table: 'public.converse_bench' } });
  await call('POST', `/v1/knowledge-sources/${source.data.id}/connect`, { credentials: { username: t.username, password: t.password } });
  await local.ingestion!.drain();
  const ready = await call('GET', `/v1/knowledge-sources/${source.data.id}`);
  const agent = await call('POST', '/v1/agents', { name: 'Librarian', model: 'gpt-4', capabilities: ['chat', 'document-search'], knowledgeSourceIds: [source.data.id] });

  // Time inside the model: wrap the engine's generate.
  const modelTime = await timeLocalModel();

  const questions = queries.map((q) => q.split(/(?<=[.?])\s+/)[0]!);
  const total: number[] = [];
  const outside: number[] = [];
  const dynamoRequests: number[] = [];
  let sessionId: string | undefined;
  for (let i = 0; i < TURNS + 20; i++) {
    if (i % 5 === 0) sessionId = undefined; // conversations of five turns
    const before = modelTime();
    const t0 = performance.now();
    const requestsBefore = dynamoTotals().dynamoRequests;
    const reply = await call('POST', `/v1/agents/${agent.data.id}/converse`, { message: questions[i % questions.length], context: sessionId ? { sessionId } : {} });
    const elapsed = performance.now() - t0;
    sessionId = String(reply.data.sessionId);
    if (i < 20) continue; // warm-up
    total.push(elapsed);
    outside.push(elapsed - (modelTime() - before));
    dynamoRequests.push(dynamoTotals().dynamoRequests - requestsBefore);
  }
  const results = {
    date: new Date().toISOString(),
    node: process.version,
    chunks: (ready.data.stats as { chunks: number }).chunks,
    turns: total.length,
    latencyMs: { p50: percentile(total, 0.5), p95: percentile(total, 0.95), mean: mean(total) },
    outsideModelMs: { p50: percentile(outside, 0.5), p95: percentile(outside, 0.95), mean: mean(outside) },
    modelMsMean: Math.round(((mean(total) - mean(outside)) * 10)) / 10,
    dynamoRequestsPerTurn: { mean: mean(dynamoRequests), max: Math.max(...dynamoRequests) },
  };
  writeResults('converse', results);
  await services.stop();
}

runBench(main);
