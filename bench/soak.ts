/**
 * Memory under sustained load (in `npm run bench`): the local server in its own process takes a
 * mixed load — agent reads and writes, searches, grounded turns in new and continued sessions —
 * for SOAK_SECONDS (default 300), while its resident memory is sampled, and, every 10 s, what its
 * heap still holds after a full collection (bench/heap-probe.mjs). What a warm instance keeps is
 * bounded (the runtime's caches, the search index cache, the API key cache, local traces: README,
 * "Memory"), so once those have filled, memory must stay flat: the result reports the first
 * minute's growth and the growth per minute after the first three (RSS and collected heap).
 * Writes bench/results/soak.json.
 */
import { randomBytes } from 'node:crypto';
import { startDynamoDbLocal } from '../local/dynamodb-local';
import { freePort } from '../local/free-port';
import { runBench, writeResults } from './common';
import { load } from './load';
import { document, rssMbOf, startChild } from './server-process';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 300);
const SAMPLE_MS = 10_000;
const CONCURRENCY = 16;

async function main() {
  const dynamo = await startDynamoDbLocal();
  const { ensureTableAt } = await import('../shared/store/ensure-table');
  await ensureTableAt(dynamo.endpoint, 'cairn-soak');
  const port = await freePort();
  const key = `cak_soak_${randomBytes(16).toString('hex')}`;
  const server = await startChild(
    ['local/server.ts'],
    { PORT: String(port), DATA_DIR: ':memory:', DYNAMODB_ENDPOINT: dynamo.endpoint, TABLE_NAME: 'cairn-soak', LOG_LEVEL: 'warn', DEV_API_KEY: key, DEV_API_KEY_PLAN: 'unlimited', CURSOR_SIGNING_KEY: randomBytes(48).toString('base64url') },
    /DEV_API_KEY=/,
    ['--expose-gc', '--import', './bench/heap-probe.mjs'],
  );
  let heapMb = 0;
  server.stderr!.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) if (line.startsWith('HEAP ')) heapMb = (JSON.parse(line.slice(5)) as { heapUsedMb: number }).heapUsedMb;
  });
  const base = `http://127.0.0.1:${port}`;
  const headers = { 'x-api-key': key, 'content-type': 'application/json' };
  const call = async (method: string, path: string, body?: unknown) => ((await (await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })).json()) as { data: { id: string; status: string } }).data;

  const files = Array.from({ length: 200 }, (_, i) => ({ path: `help/${i}.md`, content: document(i) }));
  const source = await call('POST', '/v1/knowledge-sources', { name: 'help', type: 'file-collection', files });
  await call('POST', `/v1/knowledge-sources/${source.id}/connect`, {});
  while ((await call('GET', `/v1/knowledge-sources/${source.id}`)).status !== 'ready') await new Promise((r) => setTimeout(r, 100));
  const agent = await call('POST', '/v1/agents', { name: 'Helper', model: 'gpt-4', capabilities: ['chat', 'document-search'], knowledgeSourceIds: [source.id] });
  const agentBody = JSON.stringify({ name: 'Soak', model: 'gpt-4' });
  const questions = ['how do I reset my password', 'refund for a damaged parcel', 'store opening hours', 'express shipping tracking number', 'cancel my order and get a voucher'];
  // Every fifth turn continues one of a few sessions; the rest start new ones (each session is stored, not kept in memory).
  const sessions = Array.from({ length: 8 }, (_, i) => `soak-${i}`);
  const mixed = (i: number) => {
    const question = questions[i % questions.length]!;
    switch (i % 5) {
      case 0:
        return { method: 'GET', path: `/v1/agents/${agent.id}`, headers };
      case 1:
        return { method: 'POST', path: '/v1/agents', headers: { ...headers, 'content-length': String(Buffer.byteLength(agentBody)) }, body: agentBody };
      case 2:
        return { method: 'POST', path: `/v1/knowledge-sources/${source.id}/search`, headers, body: JSON.stringify({ query: `${question} ${i % 97}`, topK: 5 }) };
      case 3:
        return { method: 'POST', path: `/v1/agents/${agent.id}/converse`, headers, body: JSON.stringify({ message: `${question} (${i})` }) };
      default:
        return { method: 'POST', path: `/v1/agents/${agent.id}/converse`, headers, body: JSON.stringify({ message: question, context: { userId: sessions[i % sessions.length] } }) };
    }
  };

  const samples: Array<{ second: number; rssMb: number; heapAfterGcMb: number; requests: number }> = [];
  const started = performance.now();
  let requests = 0;
  const sample = () => samples.push({ second: Math.round((performance.now() - started) / 1000), rssMb: rssMbOf(server.pid!), heapAfterGcMb: heapMb, requests });
  sample();
  const sampler = setInterval(sample, SAMPLE_MS);
  let errors = 0;
  while (performance.now() - started < SECONDS * 1000) {
    const run = await load({ port, total: 500, concurrency: CONCURRENCY, make: (i) => mixed(requests + i), expectStatus: [200, 201] });
    requests += run.requests;
    errors += run.errors;
  }
  clearInterval(sampler);
  sample();

  const at = (second: number) => samples.reduce((best, s) => (Math.abs(s.second - second) < Math.abs(best.second - second) ? s : best));
  const afterMinute = at(60);
  // The caches fill over the first minutes (traces: 1,000; query vectors: 1,000; search items: 64 MB).
  const warm = at(180);
  const last = samples[samples.length - 1]!;
  const minutesAfter = (last.second - warm.second) / 60;
  const perMinute = (from: number, to: number) => (minutesAfter > 0 ? Math.round(((to - from) / minutesAfter) * 10) / 10 : null);
  const result = {
    date: new Date().toISOString(),
    node: process.version,
    seconds: last.second,
    requests,
    errors,
    concurrency: CONCURRENCY,
    rssMb: { start: samples[0]!.rssMb, afterFirstMinute: afterMinute.rssMb, afterThreeMinutes: warm.rssMb, end: last.rssMb, max: Math.max(...samples.map((s) => s.rssMb)) },
    heapAfterGcMb: { afterFirstMinute: afterMinute.heapAfterGcMb, afterThreeMinutes: warm.heapAfterGcMb, end: last.heapAfterGcMb },
    growthMbPerMinuteAfterThree: { rss: perMinute(warm.rssMb, last.rssMb), heapAfterGc: perMinute(warm.heapAfterGcMb, last.heapAfterGcMb) },
    samples,
  };
  writeResults('soak', result);
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  await dynamo.stop();
}

runBench(main);
