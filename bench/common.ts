import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { startDynamoDbLocal } from '../local/dynamodb-local';
import { startS3Local } from '../local/s3-local';
import { startPostgres } from '../test/setup/postgres';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ModelResolver } from '../shared/models/types';
import type { Queue } from '../shared/queue/queue';
import type { Db } from '../shared/store/db';

/** What the benchmarks share: the CISI text, a seeded random source, percentiles, services. */
const CISI = new URL('../../shared/data/cisi/', import.meta.url);
const lines = (file: string) => readFileSync(new URL(file, CISI), 'utf8').split('\n').filter(Boolean).map((l): unknown => JSON.parse(l));

export function cisi() {
  const corpus = lines('corpus.jsonl') as Array<{ title: string; text: string }>;
  return {
    corpus,
    queries: (lines('queries.jsonl') as Array<{ text: string }>).map((q) => q.text),
    sentences: corpus.flatMap((d) => d.text.split(/(?<=\.)\s+/)).filter((s) => s.length > 30),
    titles: corpus.map((d) => d.title),
  };
}

/** Seeded random numbers, so generated corpora are reproducible. */
export { rngOf as rng } from '../test/helpers/random';

export function percentile(values: number[], p: number) {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]! * 10) / 10;
}

export const mean = (values: number[]) => Math.round((values.reduce((a, b) => a + b, 0) / values.length) * 10) / 10;

/**
 * DynamoDB Local (with the table), a PostgreSQL and an S3-compatible server (files), with this
 * process's configuration pointed at them. Product modules must be imported after this resolves: config is read once, at import.
 */
export async function startBenchServices(tableName: string) {
  const dynamo = await startDynamoDbLocal();
  const postgres = await startPostgres();
  const s3 = await startS3Local({ buckets: ['cairn-bench'] });
  process.env.DYNAMODB_ENDPOINT = dynamo.endpoint;
  process.env.S3_ENDPOINT = s3.endpoint;
  process.env.BLOB_BUCKET = 'cairn-bench';
  process.env.TABLE_NAME = tableName;
  process.env.LOG_LEVEL = 'silent';
  process.env.CURSOR_SIGNING_KEY ??= randomBytes(48).toString('base64url');
  const { ensureTableAt } = await import('../shared/store/ensure-table');
  await ensureTableAt(dynamo.endpoint, tableName);
  return {
    postgres: postgres.target,
    stop: async () => {
      await postgres.stop();
      await dynamo.stop();
      await s3.stop();
    },
  };
}

/**
 * Local mode's runtime over the benchmark's DynamoDB (after startBenchServices), with fresh
 * secrets; its queue workers run unless `workers: false`. `db`: a handle of the benchmark's own (one
 * that counts requests); `models`: in place of local mode's (a stand-in provider's).
 */
export async function benchRuntime(options: { workers?: boolean; db?: Db; models?: ModelResolver } = {}) {
  const { localRuntime } = await import('../local/local-runtime');
  const { createDb } = await import('../shared/store/db');
  const local = localRuntime({
    db: options.db ?? createDb(),
    secretsKey: randomBytes(32),
    platformSecrets: { adminToken: randomBytes(24).toString('base64url'), tokenKey: randomBytes(48).toString('base64url') },
    queueNamespace: randomBytes(6).toString('hex'),
    ...(options.models ? { models: options.models } : {}),
  });
  if (options.workers !== false) await local.start();
  return local;
}

/**
 * Local mode's models, with `openai/<model>` answered by the OpenAI-compatible stand-in the
 * benchmark listens with at `server` (and the context window given, if one is).
 */
export async function standInModels(server: Server, extra: { contextWindow?: number } = {}): Promise<ModelResolver> {
  const { openaiProvider } = await import('../shared/models/openai-provider');
  const { modelResolver } = await import('../shared/models/resolve-model');
  const engine = openaiProvider({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, apiKey: 'sk-bench' });
  const local = modelResolver();
  return { ...local, resolve: async (name) => (name.startsWith('openai/') ? { name, model: name.slice(7), engine, ...extra } : local.resolve(name)) };
}

/**
 * The local app with a fresh tenant on plan `unlimited`, and a JSON caller with its key (after
 * startBenchServices, so the app's modules read the benchmark's configuration). `options`: as
 * benchRuntime's.
 */
export async function benchApp(tenantId: string, options: { db?: Db; models?: ModelResolver } = {}) {
  const { createLocalApp } = await import('../local/local-app');
  const { scopeOf } = await import('../shared/tenancy');
  const local = await benchRuntime(options);
  const { rt } = local;
  const app = createLocalApp(rt);
  const scope = scopeOf(tenantId);
  await rt.store.apiKeys.putTenant(scope, { name: 'bench', plan: 'unlimited' });
  const { apiKey } = await rt.store.apiKeys.createApiKey(scope, { plan: 'unlimited' });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await app.request(`http://localhost${path}`, {
      method,
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await res.json()) as { data: Record<string, unknown> & { id: string } };
  };
  return { app, call, scope, apiKey, rt, local };
}

/** Counts the messages sent through a queue from now on (wraps its `send`); returns the count so far. */
export function countSent<M>(queue: Queue<M>): () => number {
  let sent = 0;
  const send = queue.send.bind(queue);
  queue.send = async (messages, options) => {
    sent += messages.length;
    await send(messages, options);
  };
  return () => sent;
}

/** The README's seed workflow over a source: classification → search → generation (the workflow and capacity benches run it). */
export const supportFlow = (knowledgeSourceId: string) => ({
  name: 'Customer support flow',
  steps: [
    { type: 'classification', config: { model: 'gpt-4', categories: ['retrieval', 'classification', 'indexing', 'other'] } },
    { type: 'search', knowledgeSourceId, query: '{{user_message}}' },
    { type: 'generation', config: { model: 'gpt-4', prompt: 'Answer: {{user_message}}' } },
  ],
});

/** Counts the time spent inside the built-in engine's generate (the "model" part of a request). */
export async function timeLocalModel(): Promise<() => number> {
  const { localEngine } = await import('../shared/models/local-engine');
  let total = 0;
  const generate = localEngine.generate.bind(localEngine);
  localEngine.generate = async (request, signal) => {
    const started = performance.now();
    try {
      return await generate(request, signal);
    } finally {
      total += performance.now() - started;
    }
  };
  return () => total;
}

/** Writes bench/results/<name>.json (the figures the README and notes quote) and prints it. */
export function writeResults(name: string, results: unknown, options: { print?: boolean } = {}) {
  const json = `${JSON.stringify(results, null, 2)}\n`;
  writeFileSync(new URL(`./results/${name}.json`, import.meta.url), json);
  process.stdout.write(`${options.print === false ? '' : json}Written to bench/results/${name}.json\n`);
}

/** Runs a benchmark's main; a failure prints its stack and exits non-zero (npm run bench stops). */
export function runBench(main: () => Promise<void>) {
  main().catch((error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
