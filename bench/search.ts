/**
 * `npm run bench` (second part): ingestion throughput and search cost at 1k, 10k and 100k chunks.
 * PostgreSQL tables of generated articles (sentences resampled from the CISI abstracts, so term
 * statistics are those of real text) are synced into the DynamoDB index by the real ingestion
 * pipeline; then the 76 CISI queries are run against each. Also a 1,000-file collection.
 * Writes bench/results/search.json. BENCH_SIZES=1000,10000 limits the sizes.
 */
import pg from 'pg';
import { benchApp, cisi, mean, percentile, rng, runBench, startBenchServices, writeResults } from './common';

const SIZES = (process.env.BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number);
const { queries, sentences, titles } = cisi();

async function main() {
  const services = await startBenchServices('cairn-bench');
  // The local app's stored ingestion queue (two batches in flight) does the ingesting.
  const { scope, rt, local } = await benchApp('ten_searchbench');
  const queue = local.ingestion!;
  const { dynamoTotals, withDynamoCounters } = await import('../shared/store/request-metrics');
  const { connectSource } = await import('../shared/domain/knowledge-connect');
  const { createKnowledgeSource, knowledgeSources } = await import('../shared/domain/knowledge-sources');
  const { searchSource } = await import('../shared/search/search');

  const t = services.postgres;
  const db = new pg.Client({ host: t.host, port: t.port, database: t.database, user: t.username, password: t.password });
  await db.connect();

  const results: Record<string, unknown> = { date: new Date().toISOString(), node: process.version, postgres: t.kind, sizes: {} };

  async function ingest(sourceId: string) {
    const before = dynamoTotals();
    const started = performance.now();
    await connectSource(rt, scope, sourceId, { options: { sync: true, index: true }, credentials: { username: t.username, password: t.password } });
    await queue.drain();
    const seconds = (performance.now() - started) / 1000;
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

  async function searchCost(source: { id: string; type: 'postgresql' | 'file-collection' }) {
    const latencies: number[] = [];
    const scoring: number[] = [];
    const requests: number[] = [];
    const units: number[] = [];
    for (let pass = 0; pass < 2; pass++) {
      for (const query of queries) {
        const started = performance.now();
        const { result, counters } = withDynamoCounters(() => searchSource(rt, scope, source, { query, topK: 10 }));
        const { scoringMs } = await result;
        if (pass === 0) continue; // the first pass warms the JIT and connections
        latencies.push(performance.now() - started);
        scoring.push(scoringMs);
        requests.push(counters.dynamoRequests);
        units.push(counters.capacityUnits);
      }
    }
    return {
      queries: latencies.length,
      latencyMs: { p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95) },
      scoringCpuMs: { mean: mean(scoring), p95: percentile(scoring, 0.95) },
      dynamoRequestsPerQuery: { mean: mean(requests), max: Math.max(...requests) },
      readUnitsPerQuery: { mean: mean(units), p95: percentile(units, 0.95) },
    };
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
    const ingestion = await ingest(record.id);
    process.stdout.write(`${ingestion.seconds} s; searching… `);
    const search = await searchCost({ id: record.id, type: 'postgresql' });
    process.stdout.write('done\n');
    (results.sizes as Record<string, unknown>)[String(size)] = { ingestion, search };
  }

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
