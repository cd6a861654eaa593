/**
 * `npm run bench` (second part): ingestion throughput and search cost at 1k, 10k and 100k chunks.
 * PostgreSQL tables of generated articles (sentences resampled from the CISI abstracts, so term
 * statistics are those of real text) are synced into the DynamoDB index by the real ingestion
 * pipeline (and compacted, as it does by itself); then the 76 CISI queries are run against each,
 * each query exhaustively (every posting read: the baseline) and pruned, alternately, in the same
 * run, and the two rankings compared. Cold reads: the search cache is off (SEARCH_CACHE_MB=0).
 * Then a 10,000-row table re-synced 50 times with 10% of its rows changed each time, before and
 * after compaction, against a freshly built index of the same rows. Also a 1,000-file collection.
 * Writes bench/results/search.json. BENCH_SIZES=1000,10000 limits the sizes; BENCH_SEARCH=0 measures
 * ingestion only, BENCH_PROFILE=<dir> writes each ingestion's CPU profile there, BENCH_RESYNC=0 leaves out the re-sync growth.
 */
import './allow-local-tools';
import pg from 'pg';
import { benchApp, cisi, mean, percentile, rng, runBench, startBenchServices, writeResults } from './common';

/** Question words a keyword query would not keep. */
const STOP = new Set(['what', 'which', 'there', 'their', 'about', 'with', 'from', 'that', 'this', 'have', 'been', 'were', 'does', 'into', 'they', 'also', 'some', 'such', 'when', 'where', 'would', 'should', 'could', 'these', 'those', 'other', 'more', 'most', 'than', 'then', 'them', 'will', 'your', 'there', 'very', 'only', 'both', 'each', 'many', 'much', 'used', 'using', 'used']);

const SIZES = (process.env.BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number);
const { queries, sentences, titles } = cisi();
/** Keyword queries: the first three terms of each CISI question, searched without feedback. */
const keywordQueries = queries.map((q) => [...new Set(q.toLowerCase().match(/[a-z]{4,}/g) ?? [])].filter((w) => !STOP.has(w)).slice(0, 3).join(' '));

/** BENCH_PROFILE=<dir>: each ingestion's CPU profile, for `bench/profile-summary.ts`. Returns the function that stops and writes it. */
async function startProfile() {
  const { Session } = await import('node:inspector/promises');
  const { mkdirSync, writeFileSync } = await import('node:fs');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async (file: string) => {
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(process.env.BENCH_PROFILE!, { recursive: true });
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  };
}

async function main() {
  process.env.SEARCH_CACHE_MB = '0';
  const services = await startBenchServices('cairn-bench');
  // The local app's stored ingestion queue (two batches in flight) does the ingesting.
  const { scope, rt, local } = await benchApp('ten_searchbench');
  const queue = local.ingestion!;
  const { dynamoTotals, withDynamoCounters } = await import('../shared/store/request-metrics');
  const { connectSource } = await import('../shared/knowledge/connect');
  const { createKnowledgeSource, knowledgeSources } = await import('../shared/knowledge/sources');
  const { searchSource } = await import('../shared/search/search');
  // Compaction's old items are removed a minute after its swap (for searches in flight); the bench need not wait that long.
  (await import('../shared/search/index-tuning')).indexTuning.compactionGraceSeconds = 1;

  const t = services.postgres;
  const db = new pg.Client({ host: t.host, port: t.port, database: t.database, user: t.username, password: t.password });
  await db.connect();

  const results: Record<string, unknown> = { date: new Date().toISOString(), node: process.version, postgres: t.kind, sizes: {} };

  /**
   * The store's own speed, the floor ingestion is measured against: the same texts written as bare
   * items by BatchWriteItem (25 a request, as many in flight as the index writer keeps), nothing
   * read, parsed or indexed. Chunks per second.
   */
  async function writeFloor(texts: string[]): Promise<number> {
    const { batchOps, putRequest } = await import('../shared/store/batch');
    const { createDb } = await import('../shared/store/db');
    const { batchWrite } = batchOps(createDb());
    const pk = `bench-floor-${texts.length}-${Date.now()}`;
    const started = performance.now();
    for (let i = 0; i < texts.length; i += 2_000) {
      await batchWrite(texts.slice(i, i + 2_000).map((text, j) => putRequest({ pk, sk: String(i + j).padStart(8, '0'), text })), 8);
    }
    return texts.length / ((performance.now() - started) / 1000);
  }

  async function ingest(sourceId: string) {
    const before = dynamoTotals();
    const profile = process.env.BENCH_PROFILE ? await startProfile() : undefined;
    const started = performance.now();
    await connectSource(rt, scope, sourceId, { options: { sync: true, index: true }, credentials: { username: t.username, password: t.password } });
    await queue.drain();
    const seconds = (performance.now() - started) / 1000;
    await profile?.(`${process.env.BENCH_PROFILE}/ingest-${sourceId}.cpuprofile`);
    const source = await knowledgeSources.get(rt, scope, sourceId);
    if (source.status !== 'ready') throw new Error(`source ended ${source.status}: ${JSON.stringify(source.error)}`);
    const after = dynamoTotals();
    const { documents, chunks } = source.stats!;
    return {
      documents,
      chunks,
      seconds: Math.round(seconds * 10) / 10,
      documentsPerSecond: Math.round(documents / seconds),
      chunksPerSecond: Math.round(chunks / seconds),
      dynamoRequestsPerChunk: Math.round(((after.dynamoRequests - before.dynamoRequests) / chunks) * 100) / 100,
      capacityUnitsPerChunk: Math.round(((after.capacityUnits - before.capacityUnits) / chunks) * 10) / 10,
    };
  }

  /** Both rankings of every query, alternately (same machine, same moment), and whether they agree. */
  async function searchCost(source: { id: string; type: 'postgresql' | 'file-collection' }, style: 'questions' | 'keywords' = 'questions') {
    const feedback = style === 'questions';
    const asked = style === 'questions' ? queries : keywordQueries;
    const modes = { exhaustive: true, pruned: false } as const;
    const measured = Object.fromEntries(Object.keys(modes).map((m) => [m, { latencies: [] as number[], scoring: [] as number[], requests: [] as number[], units: [] as number[] }]));
    let differing = 0;
    const reads = { blocksRead: 0, blocksSkipped: 0, waves: 0 };
    for (let pass = 0; pass < 2; pass++) {
      for (const query of asked) {
        const ranked: Record<string, string> = {};
        for (const [mode, exhaustive] of Object.entries(modes)) {
          const started = performance.now();
          const { result, counters } = withDynamoCounters(() => searchSource(rt, scope, source, { query, topK: 10, exhaustive, feedback }));
          const found = await result;
          ranked[mode] = found.results.map((r) => `${r.chunkId}:${r.score}`).join(' ');
          if (pass === 0) continue; // the first pass warms the JIT and connections
          const m = measured[mode]!;
          m.latencies.push(performance.now() - started);
          m.scoring.push(found.scoringMs);
          m.requests.push(counters.dynamoRequests);
          m.units.push(counters.capacityUnits);
          if (!exhaustive) {
            reads.blocksRead += found.reads.blocksRead;
            reads.blocksSkipped += found.reads.blocksSkipped;
            reads.waves += found.reads.waves;
          }
        }
        if (ranked.exhaustive !== ranked.pruned) differing++;
      }
    }
    const summary = (m: (typeof measured)[string]) => ({
      queries: m.latencies.length,
      latencyMs: { p50: percentile(m.latencies, 0.5), p95: percentile(m.latencies, 0.95) },
      scoringCpuMs: { mean: mean(m.scoring), p95: percentile(m.scoring, 0.95) },
      dynamoRequestsPerQuery: { mean: mean(m.requests), max: Math.max(...m.requests) },
      readUnitsPerQuery: { mean: mean(m.units), p95: percentile(m.units, 0.95) },
    });
    const n = asked.length;
    return {
      exhaustive: summary(measured.exhaustive!),
      pruned: { ...summary(measured.pruned!), blocksReadPerQuery: mean([reads.blocksRead / n]), blocksSkippedPerQuery: mean([reads.blocksSkipped / n]), wavesPerQuery: mean([reads.waves / n]) },
      queriesRankedDifferently: differing,
    };
  }

  async function segmentsOf(sourceId: string) {
    const live = (await rt.store.searchIndex.readSegments(scope, sourceId)).filter((s) => s.state === 'live');
    return { segments: live.length, deletedChunks: live.reduce((n, s) => n + s.deletedCount, 0) };
  }

  /**
   * A table re-synced 50 times with 10% of its rows changed each time (compaction off meanwhile),
   * searched before and after compacting, and a fresh index of the same rows: read units per query.
   */
  async function resyncGrowth() {
    const rows = Number(process.env.BENCH_RESYNC_ROWS ?? 2_000);
    const random = rng(99);
    const table = 'bench_resync';
    const body = () => Array.from({ length: 3 + Math.floor(random() * 4) }, () => sentences[Math.floor(random() * sentences.length)]).join(' ');
    await db.query(`DROP TABLE IF EXISTS ${table}`);
    await db.query(`CREATE TABLE ${table} (id integer PRIMARY KEY, title text, body text)`);
    const ids = Array.from({ length: rows }, (_, i) => i + 1);
    await db.query(`INSERT INTO ${table} SELECT * FROM unnest($1::int[], $2::text[], $3::text[])`, [ids, ids.map(() => titles[Math.floor(random() * titles.length)]!), ids.map(body)]);
    const create = async (name: string) =>
      (await createKnowledgeSource(rt, scope, { name, description: '', type: 'postgresql', config: { host: t.host, port: t.port, database: t.database, table: `public.${table}`, ssl: false } } as never)).record.id;
    const { indexTuning } = await import('../shared/search/index-tuning');
    const saved = { ...indexTuning };
    Object.assign(indexTuning, { compactAfterSegments: Infinity, compactAfterDeletedShare: Infinity });
    const grown = await create('resync');
    await ingest(grown);
    for (let round = 0; round < 50; round++) {
      const changed = ids.filter(() => random() < 0.1);
      await db.query(`UPDATE ${table} SET body = v.body FROM unnest($1::int[], $2::text[]) AS v(id, body) WHERE ${table}.id = v.id`, [changed, changed.map(body)]);
      await ingest(grown);
      process.stdout.write(`\rre-sync ${round + 1}/50`);
    }
    process.stdout.write('\n');
    Object.assign(indexTuning, saved);
    const cost = async (id: string) => (await searchCost({ id, type: 'postgresql' })).pruned.readUnitsPerQuery.mean;
    const before = { ...(await segmentsOf(grown)), readUnitsPerQuery: await cost(grown) };
    const started = performance.now();
    const { requestCompaction } = await import('../shared/knowledge/compaction');
    // Until nothing is left to merge (a compaction merges up to 90 segments and queues the next).
    await requestCompaction(rt, scope, grown);
    await queue.drain();
    const compactionSeconds = Math.round((performance.now() - started) / 100) / 10;
    const after = { ...(await segmentsOf(grown)), readUnitsPerQuery: await cost(grown) };
    const fresh = await create('fresh');
    await ingest(fresh);
    const freshCost = { ...(await segmentsOf(fresh)), readUnitsPerQuery: await cost(fresh) };
    return { rows, resyncs: 50, changedShare: 0.1, before, compactionSeconds, after, fresh: freshCost, afterOverFresh: Math.round((after.readUnitsPerQuery / freshCost.readUnitsPerQuery) * 100) / 100 };
  }

  for (const size of SIZES) {
    const random = rng(size);
    const table = `bench_articles_${size}`;
    await db.query(`DROP TABLE IF EXISTS ${table}`);
    await db.query(`CREATE TABLE ${table} (id integer PRIMARY KEY, title text, body text)`);
    for (let start = 0; start < size; start += 5000) {
      const ids: number[] = [];
      const ts: string[] = [];
      const bodies: string[] = [];
      for (let i = start; i < Math.min(size, start + 5000); i++) {
        ids.push(i + 1);
        ts.push(titles[Math.floor(random() * titles.length)]!);
        const n = 3 + Math.floor(random() * 4);
        bodies.push(Array.from({ length: n }, () => sentences[Math.floor(random() * sentences.length)]).join(' '));
      }
      await db.query(`INSERT INTO ${table} SELECT * FROM unnest($1::int[], $2::text[], $3::text[])`, [ids, ts, bodies]);
    }
    const { record } = await createKnowledgeSource(rt, scope, {
      name: table,
      description: '',
      type: 'postgresql',
      config: { host: t.host, port: t.port, database: t.database, table: `public.${table}`, ssl: false },
    } as never);
    process.stdout.write(`${size} rows: ingesting… `);
    const floorBefore = await writeFloor((await db.query<{ body: string }>(`SELECT body FROM ${table} ORDER BY id`)).rows.map((r) => r.body));
    const measured = await ingest(record.id);
    const floorAfter = await writeFloor((await db.query<{ body: string }>(`SELECT body FROM ${table} ORDER BY id`)).rows.map((r) => r.body));
    const floor = Math.min(floorBefore, floorAfter);
    const ingestion = {
      ...measured,
      floorChunksPerSecond: { before: Math.round(floorBefore), after: Math.round(floorAfter) },
      // Against the slower of the two floor runs, as the budget reads it.
      floorShare: Math.round((measured.chunksPerSecond / floor) * 100) / 100,
    };
    process.stdout.write(`${ingestion.seconds} s (${ingestion.chunksPerSecond} chunks/s, floor ${Math.round(floor)}, ${ingestion.capacityUnitsPerChunk} units/chunk); searching… `);
    const index = await segmentsOf(record.id);
    if (process.env.BENCH_SEARCH === '0') {
      process.stdout.write('\n');
      (results.sizes as Record<string, unknown>)[String(size)] = { ingestion, index };
      continue;
    }
    const search = await searchCost({ id: record.id, type: 'postgresql' });
    const keywordSearch = await searchCost({ id: record.id, type: 'postgresql' }, 'keywords');
    process.stdout.write(
      `done (read units, questions: exhaustive ${search.exhaustive.readUnitsPerQuery.mean}, pruned ${search.pruned.readUnitsPerQuery.mean}; ` +
        `keywords without feedback: exhaustive ${keywordSearch.exhaustive.readUnitsPerQuery.mean}, pruned ${keywordSearch.pruned.readUnitsPerQuery.mean})\n`,
    );
    (results.sizes as Record<string, unknown>)[String(size)] = { ingestion, index, search, keywordSearch };
  }

  if (process.env.BENCH_RESYNC !== '0') results.resync = await resyncGrowth();

  // The file path: 1,000 files in one collection.
  const random = rng(7);
  const files = Array.from({ length: 1000 }, (_, i) => ({
    path: `notes/${i}.md`,
    content: `# ${titles[Math.floor(random() * titles.length)]}\n\n${Array.from({ length: 5 }, () => sentences[Math.floor(random() * sentences.length)]).join(' ')}`,
  }));
  const { record: collection } = await createKnowledgeSource(rt, scope, { name: 'files', description: '', type: 'file-collection', files } as never);
  results.fileCollection1000 = { ingestion: await ingest(collection.id) };

  writeResults('search', results);
  await db.end();
  await services.stop();
}

runBench(main);
