/**
 * `npm run bench`: the cost of document permissions at 100k chunks. One PostgreSQL table of
 * generated articles (sentences resampled from the CISI abstracts) is indexed twice: once as it is,
 * once with an access column. The 76 CISI questions are searched on the first without a reader
 * (the baseline: no filter) and on the second as an end user, alternately, in the same run: read
 * units (the segment items now carry who may read each chunk) and latency, as ratios to the
 * baseline (target ≤ 1.3×). Two ways of granting: 50 groups (a user in 3 of them) and one reader
 * per row among 2,000 users. Cold reads: the search cache is off (SEARCH_CACHE_MB=0).
 * Writes bench/results/document-access.json. BENCH_ACCESS_ROWS sets the size (default 100,000).
 */
import './allow-local-tools';
import pg from 'pg';
import { benchApp, cisi, mean, percentile, rng, runBench, startBenchServices, writeResults } from './common';

const ROWS = Number(process.env.BENCH_ACCESS_ROWS ?? 100_000);
const { queries, sentences, titles } = cisi();

async function main() {
  process.env.SEARCH_CACHE_MB = '0';
  const services = await startBenchServices('cairn-bench');
  const { scope, rt, local } = await benchApp('ten_accessbench');
  const { withDynamoCounters } = await import('../shared/store/request-metrics');
  const { connectSource } = await import('../shared/knowledge/connect');
  const { createKnowledgeSource, knowledgeSources } = await import('../shared/knowledge/sources');
  const { searchSource } = await import('../shared/search/search');
  const t = services.postgres;
  const db = new pg.Client({ host: t.host, port: t.port, database: t.database, user: t.username, password: t.password });
  await db.connect();

  const random = rng(ROWS);
  const table = `bench_access_${ROWS}`;
  await db.query(`DROP TABLE IF EXISTS ${table}`);
  await db.query(`CREATE TABLE ${table} (id integer PRIMARY KEY, title text, body text, by_group text[], by_user text[])`);
  for (let start = 0; start < ROWS; start += 5000) {
    const ids: number[] = [];
    const ts: string[] = [];
    const bodies: string[] = [];
    const groups: string[] = [];
    const users: string[] = [];
    for (let i = start; i < Math.min(ROWS, start + 5000); i++) {
      ids.push(i + 1);
      ts.push(titles[Math.floor(random() * titles.length)]!);
      bodies.push(Array.from({ length: 3 + Math.floor(random() * 4) }, () => sentences[Math.floor(random() * sentences.length)]).join(' '));
      groups.push(`{group:g${Math.floor(random() * 50)}}`);
      users.push(`{user:u${Math.floor(random() * 2000)}}`);
    }
    await db.query(`INSERT INTO ${table} SELECT id, title, body, g::text[], u::text[] FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::text[]) AS x(id, title, body, g, u)`, [ids, ts, bodies, groups, users]);
  }

  async function indexed(name: string, accessColumn?: string) {
    const { record } = await createKnowledgeSource(rt, scope, {
      name,
      description: '',
      type: 'postgresql',
      config: { host: t.host, port: t.port, database: t.database, table: `public.${table}`, textColumns: ['title', 'body'], ssl: false, ...(accessColumn ? { accessColumn } : {}) },
    } as never);
    await connectSource(rt, scope, record.id, { options: { sync: true, index: true }, credentials: { username: t.username, password: t.password } });
    await local.ingestion!.drain();
    const source = await knowledgeSources.get(rt, scope, record.id);
    if (source.status !== 'ready') throw new Error(`${name} is ${source.status}: ${JSON.stringify(source.error)}`);
    const segments = (await rt.store.searchIndex.readSegments(scope, record.id)).filter((s) => s.state === 'live');
    process.stdout.write(`${name}: ${source.stats!.chunks} chunks in ${segments.length} segments\n`);
    return { source, segments: segments.length, chunks: source.stats!.chunks };
  }

  const open = await indexed('unfiltered');
  const byGroup = await indexed('by group', 'by_group');
  const byUser = await indexed('by user', 'by_user');
  const readers = {
    'by group': { source: byGroup.source, reader: { id: 'u-reader', groups: ['g3', 'g17', 'g41'] } },
    'by user': { source: byUser.source, reader: { id: 'u42', groups: [] as string[] } },
  };

  type Measured = { latencies: number[]; units: number[]; requests: number[]; results: number[] };
  const fresh = (): Measured => ({ latencies: [], units: [], requests: [], results: [] });
  const measured: Record<string, Measured> = { unfiltered: fresh(), 'by group': fresh(), 'by user': fresh() };
  const once = async (name: string, run: () => ReturnType<typeof searchSource>, keep: boolean) => {
    const started = performance.now();
    const { result, counters } = withDynamoCounters(run);
    const found = await result;
    if (!keep) return;
    const m = measured[name]!;
    m.latencies.push(performance.now() - started);
    m.units.push(counters.capacityUnits);
    m.requests.push(counters.dynamoRequests);
    m.results.push(found.results.length);
  };
  for (let pass = 0; pass < 2; pass++) {
    for (const query of queries) {
      // The first pass warms the JIT and connections; the second is measured, the three alternating.
      await once('unfiltered', () => searchSource(rt, scope, open.source, { query, topK: 10 }), pass === 1);
      for (const [name, { source, reader }] of Object.entries(readers)) await once(name, () => searchSource(rt, scope, source, { query, topK: 10, reader }), pass === 1);
    }
  }
  const summary = (m: Measured) => ({
    queries: m.latencies.length,
    latencyMs: { p50: percentile(m.latencies, 0.5), p95: percentile(m.latencies, 0.95) },
    readUnitsPerQuery: mean(m.units),
    dynamoRequestsPerQuery: mean(m.requests),
    resultsPerQuery: mean(m.results),
  });
  const base = summary(measured.unfiltered!);
  const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
  const filtered = Object.fromEntries(
    Object.keys(readers).map((name) => {
      const s = summary(measured[name]!);
      return [name, { ...s, readUnitsVsUnfiltered: ratio(s.readUnitsPerQuery, base.readUnitsPerQuery), latencyP50VsUnfiltered: ratio(s.latencyMs.p50, base.latencyMs.p50) }];
    }),
  );
  const results = { date: new Date().toISOString(), node: process.version, rows: ROWS, chunks: open.chunks, segments: { unfiltered: open.segments, 'by group': byGroup.segments, 'by user': byUser.segments }, target: 1.3, unfiltered: base, filtered };
  for (const [name, f] of Object.entries(filtered)) process.stdout.write(`${name}: read units ${f.readUnitsVsUnfiltered}×, latency p50 ${f.latencyP50VsUnfiltered}× the unfiltered search (${f.resultsPerQuery} results a query)\n`);
  writeResults('document-access', results);
  await db.end();
  await services.stop();
}

runBench(main);
