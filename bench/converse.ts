/**
 * `npm run bench` (third part): converse latency with the built-in engine over a 10k-chunk
 * PostgreSQL source, and how much of it is spent outside the model (retrieval, session store,
 * envelope); a turn with one tool call against one without, outside the model and the tool; and a
 * turn through an alias against the same agent's draft.
 * Writes bench/results/converse.json.
 */
import './allow-local-tools';
import { createServer } from 'node:http';
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
  // One tool call per turn: an order service on this machine, an agent that calls it, and the same
  // agent without tools, in alternation so drift hits both alike.
  const shop = createServer((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ order: req.url!.split('/').pop(), status: 'shipped', eta: '2026-11-25' })));
  await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
  const tool = {
    type: 'http', name: 'order_status', description: 'Looks up the delivery status of an order by its order number',
    parameters: { type: 'object', properties: { orderId: { type: 'string', pattern: '^[A-Z][0-9]+$' } }, required: ['orderId'] },
    url: `http://localhost:${(shop.address() as { port: number }).port}/orders/{{orderId}}`,
  };
  const withTool = await call('POST', '/v1/agents', { name: 'Support', model: 'gpt-4', tools: [tool] });
  const withoutTool = await call('POST', '/v1/agents', { name: 'Plain', model: 'gpt-4' });
  const turns = { tool: { outside: [] as number[], requests: [] as number[] }, plain: { outside: [] as number[], requests: [] as number[] } };
  for (let i = 0; i < TURNS + 20; i++) {
    for (const [kind, id] of [['tool', withTool.data.id], ['plain', withoutTool.data.id]] as const) {
      const before = modelTime();
      const requestsBefore = dynamoTotals().dynamoRequests;
      const t0 = performance.now();
      const reply = await call('POST', `/v1/agents/${id}/converse`, { message: `Where is my order A${i}?` });
      const elapsed = performance.now() - t0;
      if (i < 20) continue;
      const toolMs = ((reply.data.toolCalls as Array<{ durationMs: number }> | undefined) ?? []).reduce((n, c) => n + c.durationMs, 0);
      turns[kind].outside.push(elapsed - (modelTime() - before) - toolMs);
      turns[kind].requests.push(dynamoTotals().dynamoRequests - requestsBefore);
    }
  }
  await new Promise<void>((resolve) => shop.close(() => resolve()));

  // A release: the same agent through an alias (resolved, then cached per warm instance) against its
  // draft, turn by turn in alternation, new sessions and continued ones alike.
  await call('POST', `/v1/agents/${withoutTool.data.id}/versions`, {});
  await call('PUT', `/v1/agents/${withoutTool.data.id}/aliases/live`, { routing: [{ version: 1 }] });
  const released = { alias: { ms: [] as number[], requests: [] as number[] }, draft: { ms: [] as number[], requests: [] as number[] } };
  const sessions: Record<'alias' | 'draft', string | undefined> = { alias: undefined, draft: undefined };
  for (let i = 0; i < TURNS + 20; i++) {
    for (const kind of ['alias', 'draft'] as const) {
      if (i % 5 === 0) sessions[kind] = undefined;
      const requestsBefore = dynamoTotals().dynamoRequests;
      const t0 = performance.now();
      const reply = await call('POST', `/v1/agents/${withoutTool.data.id}/converse`, { message: `Where is my order A${i}?`, ...(kind === 'alias' ? { alias: 'live' } : {}), context: sessions[kind] ? { sessionId: sessions[kind] } : {} });
      const elapsed = performance.now() - t0;
      sessions[kind] = String(reply.data.sessionId);
      if (i < 20) continue;
      released[kind].ms.push(elapsed);
      released[kind].requests.push(dynamoTotals().dynamoRequests - requestsBefore);
    }
  }
  const aliasTurn = {
    aliasMs: { p50: percentile(released.alias.ms, 0.5), mean: mean(released.alias.ms) },
    draftMs: { p50: percentile(released.draft.ms, 0.5), mean: mean(released.draft.ms) },
    p50Ratio: Math.round((percentile(released.alias.ms, 0.5) / percentile(released.draft.ms, 0.5)) * 100) / 100,
    dynamoRequestsPerTurn: { alias: mean(released.alias.requests), draft: mean(released.draft.requests) },
  };
  const toolTurn = {
    withToolOutsideModelAndToolMs: { p50: percentile(turns.tool.outside, 0.5), mean: mean(turns.tool.outside) },
    withoutToolOutsideModelMs: { p50: percentile(turns.plain.outside, 0.5), mean: mean(turns.plain.outside) },
    overheadRatio: Math.round((mean(turns.tool.outside) / mean(turns.plain.outside)) * 100) / 100,
    dynamoRequestsPerTurn: { withTool: mean(turns.tool.requests), withoutTool: mean(turns.plain.requests) },
  };

  const results = {
    date: new Date().toISOString(),
    node: process.version,
    chunks: (ready.data.stats as { chunks: number }).chunks,
    turns: total.length,
    latencyMs: { p50: percentile(total, 0.5), p95: percentile(total, 0.95), mean: mean(total) },
    outsideModelMs: { p50: percentile(outside, 0.5), p95: percentile(outside, 0.95), mean: mean(outside) },
    modelMsMean: Math.round(((mean(total) - mean(outside)) * 10)) / 10,
    dynamoRequestsPerTurn: { mean: mean(dynamoRequests), max: Math.max(...dynamoRequests) },
    oneToolCallTurn: toolTurn,
    aliasAgainstDraft: aliasTurn,
  };
  writeResults('converse', results);
  await services.stop();
}

runBench(main);
