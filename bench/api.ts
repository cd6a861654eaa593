/**
 * `npm run bench`: the public API on the local server next to a bare Hono hello-world on the same
 * adapter, measured in one run (the ratio is what to quote; machines here are shared and noisy),
 * plus the DynamoDB requests each API call makes. Writes bench/results/api.json.
 */
import { randomBytes } from 'node:crypto';
import { startDynamoDbLocal } from '../local/dynamodb-local';
import { freePort } from '../local/free-port';
import type { Runtime } from '../shared/runtime';
import { benchRuntime, runBench, writeResults } from './common';
import { load, type LoadResult } from './load';
import { cpuMsOf, document, startChild } from './server-process';

const TOTAL = Number(process.env.BENCH_REQUESTS ?? 4000);
/** BENCH_PROFILE=<dir>: the Cairn server runs with --cpu-prof and writes its profile there on exit. */
const PROFILE_DIR = process.env.BENCH_PROFILE;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);

/**
 * What DynamoDB Local alone allows: the store calls a warm GET makes (its rate-limit take, a write
 * for a key that is not busy and about one per block for one that is, and the read of the same
 * agent: a missing item would cost DynamoDB Local a third less), issued in process at the same
 * concurrency. The API cannot be faster than this here. Measured before
 * the scenarios and after them, on the same table: the table grows and the machine drifts between.
 */
async function dynamoFloor(rt: Runtime, scope: { tenantId: string; schema: string }, agentId: string, concurrency: number, total: number): Promise<LoadResult> {
  const { consumeRequest } = rt.store.rateCounters;
  // Imported here, as every product module is: config is read once DYNAMODB_ENDPOINT is set.
  const { storedAgent } = await import('../shared/agents/agent-schema');
  const agentRecords = rt.store.records.table('AGENT', storedAgent);
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < total) {
        const t0 = performance.now();
        await consumeRequest(scope, 'key_floor', 'agents', { minute: 1e9, hour: 1e9 });
        if (!(await agentRecords.get(scope, agentId))) throw new Error(`the floor reads agent ${agentId}, which is not there`);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Math.round(latencies[Math.floor(q * (latencies.length - 1))]! * 100) / 100;
  return { requests: latencies.length, seconds: Math.round(seconds * 100) / 100, throughput: Math.round(latencies.length / seconds), p50: at(0.5), p99: at(0.99), errors: 0 };
}

async function main() {
  const dynamo = await startDynamoDbLocal();
  process.env.DYNAMODB_ENDPOINT = dynamo.endpoint;
  process.env.LOG_LEVEL = 'silent';
  process.env.TABLE_NAME = 'cairn-bench';
  process.env.CURSOR_SIGNING_KEY ??= randomBytes(48).toString('base64url');
  // Imported after the environment is set: config is read once, at import.
  const { scopeOf } = await import('../shared/tenancy');
  const { dynamoTotals } = await import('../shared/store/request-metrics');
  const { createLocalApp } = await import('../local/local-app');
  const { ensureTableAt } = await import('../shared/store/ensure-table');
  await ensureTableAt(dynamo.endpoint, 'cairn-bench');
  // No queue workers here: their polling would count in the DynamoDB requests per call.
  const { rt } = await benchRuntime({ workers: false });
  const { createApiKey, putTenant } = rt.store.apiKeys;

  // Enterprise keys (10,000 requests a minute for agents): each scenario gets its own budget.
  const scope = scopeOf('ten_bench');
  await putTenant(scope, { name: 'bench', plan: 'enterprise' });
  const key = async () => (await createApiKey(scope, { plan: 'enterprise' })).apiKey;
  const agentBody = JSON.stringify({ name: 'Support bot', description: 'Answers questions', model: 'gpt-4', temperature: 0.3, maxTokens: 512, capabilities: ['chat', 'document-search'] });
  const json = (k: string) => ({ 'x-api-key': k, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(agentBody)) });

  // DynamoDB requests per call, in process, warm key cache (and the first, cold call).
  const app = createLocalApp(rt);
  const countKey = await key();
  const counted = async (method: string, path: string, body?: string) => {
    const before = dynamoTotals().dynamoRequests;
    const res = await app.request(`http://localhost${path}`, { method, headers: body ? json(countKey) : { 'x-api-key': countKey }, body });
    const out = (await res.json()) as { data?: { id?: string } };
    return { requests: dynamoTotals().dynamoRequests - before, id: out.data?.id };
  };
  const cold = await counted('POST', '/v1/agents', agentBody);
  const post = await counted('POST', '/v1/agents', agentBody);
  const get = await counted('GET', `/v1/agents/${post.id}`);
  const list = await counted('GET', '/v1/agents?limit=20');
  const put = await counted('PUT', `/v1/agents/${post.id}`, agentBody);
  const del = await counted('DELETE', `/v1/agents/${post.id}`);
  const dynamoPerCall: Record<string, number> = {
    'POST /v1/agents (first call of a key: +1 key look-up)': cold.requests,
    'POST /v1/agents': post.requests,
    'GET /v1/agents/{id}': get.requests,
    'GET /v1/agents': list.requests,
    'PUT /v1/agents/{id}': put.requests,
    'DELETE /v1/agents/{id}': del.requests,
  };

  // Throughput and latency over HTTP, each server in its own process.
  const helloPort = await freePort();
  const cairnPort = await freePort();
  const hello = await startChild(['bench/hello-server.ts', String(helloPort)], {}, /listening/);
  const serverKey = await key();
  const cairn = await startChild(
    ['local/server.ts'],
    { PORT: String(cairnPort), DATA_DIR: ':memory:', DYNAMODB_ENDPOINT: dynamo.endpoint, TABLE_NAME: 'cairn-bench', LOG_LEVEL: 'warn', DEV_API_KEY: serverKey, DEV_API_KEY_PLAN: 'enterprise' },
    /DEV_API_KEY=/,
    PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [],
  );
  const getKey = await key();
  const created = await fetch(`http://127.0.0.1:${cairnPort}/v1/agents`, { method: 'POST', headers: json(getKey), body: agentBody });
  const agentId = ((await created.json()) as { data: { id: string } }).data.id;

  // A ready knowledge source of 300 documents and an agent grounded in it, for search and converse.
  const base = `http://127.0.0.1:${cairnPort}`;
  const call = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${base}${path}`, { method, headers: { 'x-api-key': getKey, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return ((await res.json()) as { data: { id: string; status: string } }).data;
  };
  const files = Array.from({ length: 300 }, (_, i) => ({ path: `help/${i}.md`, content: document(i) }));
  const source = await call('POST', '/v1/knowledge-sources', { name: 'help', type: 'file-collection', files });
  await call('POST', `/v1/knowledge-sources/${source.id}/connect`, {});
  while ((await call('GET', `/v1/knowledge-sources/${source.id}`, undefined).catch(() => ({ status: '' }))).status !== 'ready') await new Promise((r) => setTimeout(r, 100));
  const grounded = await call('POST', '/v1/agents', { name: 'Helper', model: 'gpt-4', capabilities: ['chat', 'document-search'], knowledgeSourceIds: [source.id] });

  // The same calls in process, for their DynamoDB requests (the source is in the shared table).
  const countOne = async (path: string, body: unknown) => {
    const before = dynamoTotals().dynamoRequests;
    const res = await app.request(`http://localhost${path}`, { method: 'POST', headers: { 'x-api-key': getKey, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await res.text();
    return dynamoTotals().dynamoRequests - before;
  };
  const searchPath = `/v1/knowledge-sources/${source.id}/search`;
  const question = { query: 'refund for a damaged parcel', topK: 5 };
  dynamoPerCall['POST /v1/knowledge-sources/{id}/search (cold: nothing cached)'] = await countOne(searchPath, question);
  dynamoPerCall['POST /v1/agents/{id}/converse (cold)'] = await countOne(`/v1/agents/${grounded.id}/converse`, { message: 'where is my parcel' });
  // The index cache keeps what was read 5 s after a segment was first seen live: read again after that.
  await new Promise((r) => setTimeout(r, 5500));
  await countOne(searchPath, question);
  await countOne(`/v1/agents/${grounded.id}/converse`, { message: 'where is my parcel' });
  dynamoPerCall['POST /v1/knowledge-sources/{id}/search (warm: the same question again)'] = await countOne(searchPath, question);
  dynamoPerCall['POST /v1/agents/{id}/converse (warm)'] = await countOne(`/v1/agents/${grounded.id}/converse`, { message: 'where is my parcel' });

  const runs: Record<string, LoadResult & { cpuMsPerRequest?: number; dynamoCpuMsPerRequest?: number }> = {};
  const scenario = async (name: string, port: number, make: Parameters<typeof load>[0]['make'], expectStatus: number, total = TOTAL, server = cairn) => {
    await load({ port, total: Math.min(1000, total), concurrency: CONCURRENCY, make, expectStatus }); // warm-up (JIT, connections)
    const cpuBefore = cpuMsOf(server.pid!);
    const dynamoBefore = cpuMsOf(dynamo.pid);
    const run = await load({ port, total, concurrency: CONCURRENCY, make, expectStatus });
    const perRequest = (ms: number) => Math.round((ms / run.requests) * 1000) / 1000;
    runs[name] = { ...run, cpuMsPerRequest: perRequest(cpuMsOf(server.pid!) - cpuBefore), dynamoCpuMsPerRequest: perRequest(cpuMsOf(dynamo.pid) - dynamoBefore) };
  };
  const questions = ['how do I reset my password', 'refund for a damaged parcel', 'store opening hours', 'express shipping tracking number', 'cancel my order and get a voucher'];
  // Hello-world answers ~40× faster: more requests keep its run long enough to be stable.
  const helloTotal = TOTAL * 10;
  const FLOOR = 'DynamoDB Local alone (the store calls of a warm GET, no HTTP API)';
  await dynamoFloor(rt, scope, agentId, CONCURRENCY, Math.min(1000, TOTAL)); // warm-up, as the scenarios have
  // DynamoDB Local's own CPU per request, to set beside the API scenarios' (both share the machine's cores).
  const floorRun = async () => {
    const before = cpuMsOf(dynamo.pid);
    const run = await dynamoFloor(rt, scope, agentId, CONCURRENCY, TOTAL);
    return { ...run, dynamoCpuMsPerRequest: Math.round(((cpuMsOf(dynamo.pid) - before) / run.requests) * 1000) / 1000 };
  };
  runs[`${FLOOR}, before`] = await floorRun();
  await scenario('hello-world (bare Hono)', helloPort, () => ({ method: 'GET', path: '/hello' }), 200, helloTotal, hello);
  await scenario('GET /v1/agents/{id}', cairnPort, () => ({ method: 'GET', path: `/v1/agents/${agentId}`, headers: { 'x-api-key': getKey } }), 200);
  const postKey = await key();
  await scenario('POST /v1/agents', cairnPort, () => ({ method: 'POST', path: '/v1/agents', headers: json(postKey), body: agentBody }), 201);
  const searchKey = await key();
  await scenario('POST /v1/knowledge-sources/{id}/search', cairnPort, (i) => {
    const body = JSON.stringify({ query: questions[i % questions.length], topK: 5 });
    return { method: 'POST', path: `/v1/knowledge-sources/${source.id}/search`, headers: { 'x-api-key': searchKey, 'content-type': 'application/json' }, body };
  }, 200);
  const converseKey = await key();
  await scenario('POST /v1/agents/{id}/converse', cairnPort, (i) => {
    const body = JSON.stringify({ message: questions[i % questions.length] });
    return { method: 'POST', path: `/v1/agents/${grounded.id}/converse`, headers: { 'x-api-key': converseKey, 'content-type': 'application/json' }, body };
  }, 200, TOTAL / 2);
  await scenario('hello-world again (drift check)', helloPort, () => ({ method: 'GET', path: '/hello' }), 200, helloTotal, hello);
  runs[`${FLOOR}, after`] = await floorRun();
  const floor = Math.min(runs[`${FLOOR}, before`]!.throughput, runs[`${FLOOR}, after`]!.throughput);

  // The baseline is the mean of the hello-world runs before and after, to cancel drift.
  const baseline = (runs['hello-world (bare Hono)']!.throughput + runs['hello-world again (drift check)']!.throughput) / 2;
  const cpuBaseline = (runs['hello-world (bare Hono)']!.cpuMsPerRequest! + runs['hello-world again (drift check)']!.cpuMsPerRequest!) / 2;
  const result = {
    date: new Date().toISOString(),
    node: process.version,
    requestsPerScenario: TOTAL,
    concurrency: CONCURRENCY,
    dynamoRequestsPerCall: dynamoPerCall,
    // GET's throughput over the lower of the two floor runs (issue 34 asks for at least 0.8).
    getVsDynamoFloor: Math.round((runs['GET /v1/agents/{id}']!.throughput / floor) * 1000) / 1000,
    runs: Object.fromEntries(
      Object.entries(runs).map(([name, r]) => [
        name,
        {
          ...r,
          throughputVsHello: Math.round((r.throughput / baseline) * 1000) / 1000,
          ...(r.cpuMsPerRequest !== undefined ? { cpuVsHello: Math.round((r.cpuMsPerRequest / cpuBaseline) * 10) / 10 } : {}),
        },
      ]),
    ),
  };
  process.stdout.write(`\nDynamoDB requests per API call:\n`);
  for (const [call, n] of Object.entries(dynamoPerCall)) process.stdout.write(`  ${String(n).padStart(2)}  ${call}\n`);
  process.stdout.write(`\n${TOTAL} requests per API scenario (hello-world ${helloTotal}), ${CONCURRENCY} keep-alive connections:\n`);
  process.stdout.write(`  ${'scenario'.padEnd(48)} ${'req/s'.padStart(7)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'vs hello'.padStart(9)} ${'CPU ms/req'.padStart(11)} ${'CPU vs hello'.padStart(13)} ${'DynamoDB CPU ms/req'.padStart(20)} errors\n`);
  for (const [name, r] of Object.entries(result.runs)) {
    const cpu = (v: number | undefined) => (v === undefined ? '' : String(v));
    process.stdout.write(
      `  ${name.padEnd(48)} ${String(r.throughput).padStart(7)} ${String(r.p50).padStart(8)} ${String(r.p99).padStart(8)} ${String(r.throughputVsHello).padStart(9)} ${cpu(r.cpuMsPerRequest).padStart(11)} ${cpu(r.cpuVsHello).padStart(13)} ${cpu(r.dynamoCpuMsPerRequest).padStart(20)} ${r.errors}\n`,
    );
  }
  process.stdout.write('\n');
  writeResults('api', result, { print: false });

  hello.kill('SIGTERM');
  cairn.kill('SIGTERM');
  await new Promise((r) => cairn.once('exit', r));
  await dynamo.stop();
}

runBench(main);
