/**
 * `npm run bench` (models): what a fallback chain and its circuit breaker cost.
 * - The added latency of a fallback: a chain whose first model fails (an immediate 503) and whose
 *   second answers, against the failed call alone and the answering call alone, interleaved in the
 *   same loop so the machine's noise falls on all three alike. What is left is the chain's own work.
 * - Turns per second with the breaker open: an agent whose model times out (its provider's
 *   `timeoutMs`), falling back to the built-in engine, against an agent on the built-in engine, both
 *   through the API against DynamoDB Local. Before the circuit opens every turn waits out the
 *   time-out; once open, the failing model is skipped.
 * Writes bench/results/models.json.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ResolvedModel } from '../shared/models/types';
import { benchApp, runBench, startBenchServices, writeResults } from './common';

const CALLS = Number(process.env.BENCH_MODEL_CALLS ?? 400);
const TURNS = Number(process.env.BENCH_MODEL_TURNS ?? 300);
const TIMEOUT_MS = 250;

/** An OpenAI-compatible stand-in: `ok` answers at once, `down` is a 503 at once, `slow` answers after the time-out. */
async function standIn() {
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const { model } = JSON.parse(raw) as { model: string };
      if (model === 'down') return res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"message":"overloaded"}}');
      const answer = () =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'Within 30 days.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 20, completion_tokens: 4 } }));
      if (model === 'slow') setTimeout(answer, TIMEOUT_MS + 100);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` };
}

async function main() {
  const wire = await standIn();
  // Read once at import by the product's config: set before any product module loads.
  process.env.MODEL_PROVIDERS = JSON.stringify({ bench: { type: 'openai-compatible', baseUrl: wire.url, timeoutMs: TIMEOUT_MS } });
  const services = await startBenchServices('cairn-bench');
  const { modelResolver } = await import('../shared/models/resolve-model');
  const { modelChain } = await import('../shared/models/model-chain');
  const { CircuitBreakers } = await import('../shared/models/circuit-breaker');
  const { systemClock } = await import('../shared/clock');

  // 1. The added latency of a fallback: the chain's own work, with engines that answer and fail at
  // once in this process (so nothing else is timed), then the same over HTTP to the stand-in.
  const { providerError } = await import('../shared/models/provider-error');
  const request = { model: '', now: Date.now(), messages: [{ role: 'user' as const, content: 'How long can I return it?' }], temperature: 0, maxTokens: 64 };
  // A signal per call, as each request has its own (one signal shared by every call would gather them all as dependents).
  const signal = () => new AbortController().signal;
  const time = async (fn: () => Promise<unknown>) => {
    const started = performance.now();
    await fn().catch(() => undefined);
    return performance.now() - started;
  };
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return Math.round(sorted[Math.floor(sorted.length / 2)]! * 1000) / 1000;
  };
  const inProcess = (name: string, fails: boolean) => ({
    name,
    model: name,
    timeoutMs: TIMEOUT_MS,
    engine: {
      provider: 'openai',
      supportsTools: true,
      async generate() {
        if (fails) throw providerError('bench', 503);
        return { text: 'Within 30 days.', usage: { inputTokens: 20, outputTokens: 4 }, finishReason: 'stop' as const };
      },
      async *stream(): AsyncGenerator<string, never> {
        throw new Error('not streamed here');
      },
    },
  });
  const measure = async (ok: ResolvedModel, down: ResolvedModel, calls: number) => {
    const samples = { answering: [] as number[], failed: [] as number[], chain: [] as number[] };
    for (let i = 0; i < calls + 50; i++) {
      const answering = await time(() => ok.engine.generate({ ...request, model: ok.model }, signal()));
      const failed = await time(() => down.engine.generate({ ...request, model: down.model }, signal()));
      // A fresh set of breakers each time: the failing model is always tried (its circuit never opens here).
      const chain = await time(() => modelChain([down, ok], new CircuitBreakers(systemClock)).engine.generate(request, signal()));
      if (i < 50) continue; // warm-up
      samples.answering.push(answering);
      samples.failed.push(failed);
      samples.chain.push(chain);
    }
    return {
      calls,
      answeringCallMs: median(samples.answering),
      failedCallMs: median(samples.failed),
      chainMs: median(samples.chain),
      /** The chain's own work: its time less the failed call's and the answering call's. */
      addedMs: Math.round((median(samples.chain) - median(samples.failed) - median(samples.answering)) * 1000) / 1000,
    };
  };
  const models = modelResolver({ keys: async () => ({}) });
  const [okWire, downWire] = await Promise.all([models.resolve('bench/ok'), models.resolve('bench/down')]);
  const fallback = {
    target: 'addedMs ≤ 5 ms',
    inProcess: await measure(inProcess('bench/ok', false), inProcess('bench/down', true), CALLS * 10),
    // Over loopback HTTP the calls' own times swing with the machine; the chain's share is the in-process figure.
    overHttp: await measure(okWire, downWire, CALLS),
  };

  // 2. Turns per second through the API, with the failing model's circuit open.
  const { call } = await benchApp('ten_modelsbench');
  const agent = async (model: string, fallbackModels?: string[]) => (await call('POST', '/v1/agents', { name: model, model, ...(fallbackModels ? { fallbackModels } : {}) })).data.id;
  const routed = await agent('bench/slow', ['local/extractive']);
  const local = await agent('local/extractive');
  const turnsPerSecond = async (agentId: string, turns: number, concurrency: number) => {
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < turns) {
          next++;
          await call('POST', '/v1/chat/completions', { model: agentId, messages: [{ role: 'user', content: 'How long can I return an item?' }] });
        }
      }),
    );
    return Math.round((turns / ((performance.now() - started) / 1000)) * 10) / 10;
  };
  // Closed: each of the first five turns waits out the time-out before the fallback answers; then it opens.
  const closedTurnsPerSecond = await turnsPerSecond(routed, 5, 1);
  await turnsPerSecond(local, 30, 4); // warm-up
  const builtIn = { sequential: await turnsPerSecond(local, TURNS, 1), concurrent16: await turnsPerSecond(local, TURNS, 16) };
  const open = { sequential: await turnsPerSecond(routed, TURNS, 1), concurrent16: await turnsPerSecond(routed, TURNS, 16) };
  const breaker = {
    turns: TURNS,
    timeoutMs: TIMEOUT_MS,
    whileClosedTurnsPerSecond: closedTurnsPerSecond,
    openTurnsPerSecond: open,
    builtInEngineTurnsPerSecond: builtIn,
    /** Turns of the agent whose model is down, over turns of an agent on the built-in engine: what the skipped model costs once its circuit is open. */
    openOverBuiltIn: { sequential: Math.round((open.sequential / builtIn.sequential) * 1000) / 1000, concurrent16: Math.round((open.concurrent16 / builtIn.concurrent16) * 1000) / 1000 },
  };

  writeResults('models', { date: new Date().toISOString(), fallback, breaker });
  await new Promise<void>((resolve) => wire.server.close(() => resolve()));
  await services.stop();
  process.exit(0);
}

runBench(main);
