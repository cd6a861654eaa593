/**
 * `npm run bench`: what a background run costs, and whether a long session's prompt stays flat.
 *
 * Rounds: an OpenAI-compatible stand-in (no delay) asks for ROUNDS tool calls of a local tool, then
 * answers; the same job runs as one synchronous converse and as a background run, taking turns.
 * Per tool round: DynamoDB requests, write units (DynamoDB Local's ConsumedCapacity), milliseconds
 * and this process's CPU; and what a whole converse turn of one round costs, the other unit a
 * background round compares with. The local queue's own items are left out of the counts: in AWS
 * it is SQS. BENCH_RUNS_TRACE=1 prints one job's requests by operation and key, and their time.
 *
 * Sessions: 200 turns of one session against a model with a 16,384-token window; the tokens of
 * each request the stand-in receives, and how many summaries it was asked to write.
 * Writes bench/results/runs.json.
 */
import './allow-local-tools';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { benchApp, mean, percentile, runBench, standInModels, startBenchServices, writeResults } from './common';

const ROUNDS = 20;
const REPS = Number(process.env.BENCH_RUNS_REPS ?? 8);
const SESSION_TURNS = 200;
const WINDOW = 16_384;

async function main() {
  const services = await startBenchServices('cairn-bench-runs');
  const requestTokens: number[] = [];
  let summaries = 0;
  const { windowTokens } = await import('../shared/models/context-window');
  const provider = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as { messages: Array<{ role: string; content: string | null; tool_calls?: Array<{ id: string }> }>; tools?: unknown[] };
      const summary = body.messages[0]?.content?.startsWith('You keep the running summary') ?? false;
      if (summary) summaries++;
      else if (!body.tools) requestTokens.push(body.messages.reduce((sum, m) => sum + windowTokens(m.content ?? ''), 0));
      const asked = Number(/rounds: (\d+)/.exec(body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '')?.[1] ?? 0);
      const done = body.messages.filter((m) => m.role === 'tool').length;
      const message =
        summary ? { role: 'assistant', content: 'The user has been describing the warehouse schedule, week by week.' }
        : done < asked && body.tools?.length ? { role: 'assistant', content: null, tool_calls: [{ id: `call_${done}`, type: 'function', function: { name: 'record', arguments: JSON.stringify({ n: done }) } }] }
        : { role: 'assistant', content: `Done after ${done} rounds.` };
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({ id: 'c', object: 'chat.completion', created: 1764115200, model: 'm', choices: [{ index: 0, message, finish_reason: 'tool_calls' in message ? 'tool_calls' : 'stop' }], usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 } }),
      );
    });
  });
  const tool = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"recorded":true}'));
  });
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => tool.listen(0, '127.0.0.1', resolve));

  const { createDb } = await import('../shared/store/db');

  // Every DynamoDB request but the local queue's, with the write units it consumed.
  const counted = { requests: 0, writeUnits: 0 };
  const trace = new Map<string, number>();
  const db = createDb();
  const send = db.client.send.bind(db.client);
  const countingDb = {
    ...db,
    client: {
      send: async (command: Parameters<typeof send>[0]) => {
        const input = command.input as Record<string, unknown>;
        if (JSON.stringify(input).includes('"QUEUE#')) {
          const t0 = performance.now();
          const out = await send(command);
          if (process.env.BENCH_RUNS_TRACE) trace.set(`queue ${command.operation} ms`, (trace.get(`queue ${command.operation} ms`) ?? 0) + performance.now() - t0);
          return out;
        }
        const t0 = performance.now();
        input.ReturnConsumedCapacity = 'TOTAL';
        const out = (await send(command)) as { ConsumedCapacity?: { CapacityUnits?: number; WriteCapacityUnits?: number } | Array<{ CapacityUnits?: number }> };
        counted.requests++;
        if (process.env.BENCH_RUNS_TRACE) trace.set(`store ${command.operation} ms`, (trace.get(`store ${command.operation} ms`) ?? 0) + performance.now() - t0);
        if (process.env.BENCH_RUNS_TRACE) {
          const named = (input.Key as { pk?: string } | undefined)?.pk ?? (input.Item as { pk?: string } | undefined)?.pk ?? (input.ExpressionAttributeValues as Record<string, string> | undefined)?.[':pk'];
          const where = `${command.operation} ${(named ?? JSON.stringify(input).slice(0, 120)).replace(/^T#[^#]+#/, '').replace(/[0-9a-z]{20,}/g, '…')}`;
          trace.set(where, (trace.get(where) ?? 0) + 1);
        }
        if (/^(Put|Update|Delete|BatchWrite|TransactWrite)/.test(command.operation)) {
          const consumed = [out.ConsumedCapacity ?? []].flat();
          counted.writeUnits += consumed.reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
        }
        return out;
      },
    },
  } as typeof db;
  const { call, rt, local: runtime } = await benchApp('ten_runsbench', { db: countingDb, models: await standInModels(provider, { contextWindow: WINDOW }) });

  const agentId = (
    await call('POST', '/v1/agents', {
      name: 'Rounds',
      model: 'openai/gpt-4o',
      maxToolSteps: ROUNDS,
      tools: [{ type: 'http', name: 'record', description: 'Records an item', method: 'POST', url: `http://127.0.0.1:${(tool.address() as AddressInfo).port}/record`, parameters: { type: 'object', properties: { n: { type: 'integer' } } } }],
    })
  ).data.id;

  // Rounds: synchronous and background in turns, the first of each a warm-up.
  const measured = { converse: { ms: [] as number[], cpuMs: [] as number[], requests: [] as number[], writeUnits: [] as number[] }, run: { ms: [] as number[], cpuMs: [] as number[], requests: [] as number[], writeUnits: [] as number[] } };
  for (let i = 0; i <= REPS; i++) {
    for (const mode of ['converse', 'run'] as const) {
      counted.requests = 0;
      counted.writeUnits = 0;
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      if (mode === 'converse') {
        const reply = await call('POST', `/v1/agents/${agentId}/converse`, { message: `rounds: ${ROUNDS}` });
        if (!String(reply.data.reply).startsWith(`Done after ${ROUNDS}`)) throw new Error(`converse: ${JSON.stringify(reply)}`);
      } else {
        const started = await call('POST', `/v1/agents/${agentId}/runs`, { message: `rounds: ${ROUNDS}`, maxToolSteps: ROUNDS });
        // Told by the store when the run ends (no polling to compete with the run for DynamoDB Local).
        await new Promise<void>((resolve) => {
          const ended = (record: { status: string }) => {
            if (['completed', 'failed', 'cancelled', 'expired'].includes(record.status)) {
              rt.store.runs.changes.off(started.data.id, ended);
              resolve();
            }
          };
          rt.store.runs.changes.on(started.data.id, ended);
        });
        const run = await call('GET', `/v1/agents/${agentId}/runs/${started.data.id}`);
        counted.requests--; // the GET that checked it
        if (run.data.status !== 'completed') throw new Error(`run: ${JSON.stringify(run.data).slice(0, 300)}`);
      }
      const ms = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      measured[mode].cpuMs.push((cpu.user + cpu.system) / 1000 / ROUNDS);
      if (process.env.BENCH_RUNS_TRACE && i === 1) console.log(mode, [...trace.entries()].sort((a, b) => b[1] - a[1]));
      trace.clear();
      if (i === 0) continue;
      measured[mode].ms.push(ms / ROUNDS);
      measured[mode].requests.push(counted.requests / ROUNDS);
      measured[mode].writeUnits.push(counted.writeUnits / ROUNDS);
    }
  }
  // What one synchronous converse turn of a single tool round costs in all: the unit a background round is compared with too.
  const oneRound: number[] = [];
  for (let i = 0; i < REPS; i++) {
    counted.requests = 0;
    await call('POST', `/v1/agents/${agentId}/converse`, { message: 'rounds: 1' });
    oneRound.push(counted.requests);
  }
  const perRound = (mode: 'converse' | 'run') => ({ ms: { p50: percentile(measured[mode].ms, 0.5), mean: mean(measured[mode].ms) }, nodeCpuMs: mean(measured[mode].cpuMs), requests: mean(measured[mode].requests), writeUnits: mean(measured[mode].writeUnits) });
  const [sync, background] = [perRound('converse'), perRound('run')];

  // A 200-turn session: the prompt each turn sends.
  const chatter = (i: number) => `Week ${i}: the warehouse received ${i * 7} parcels, shipped ${i * 5}, and the night shift asked about the loading dock again. ${'We went over the schedule in detail. '.repeat(4)}`;
  const talker = (await call('POST', '/v1/agents', { name: 'Talker', model: 'openai/gpt-4o' })).data.id;
  requestTokens.length = 0;
  summaries = 0;
  let sessionId: string | undefined;
  for (let i = 0; i < SESSION_TURNS; i++) {
    const turn = await call('POST', `/v1/agents/${talker}/converse`, { message: chatter(i), ...(sessionId ? { context: { sessionId } } : {}) });
    sessionId = String(turn.data.sessionId);
  }
  const at = (turn: number) => requestTokens[turn - 1]!;
  const maxOf = (from: number, to: number) => Math.max(...requestTokens.slice(from - 1, to));

  writeResults('runs', {
    date: new Date().toISOString(),
    roundsPerJob: ROUNDS,
    jobsMeasured: REPS,
    perToolRound: {
      synchronousConverse: sync,
      backgroundRun: background,
      requestsRatio: Math.round((background.requests / sync.requests) * 100) / 100,
      oneRoundConverseTurnRequests: mean(oneRound),
      requestsRatioToOneRoundTurn: Math.round((background.requests / mean(oneRound)) * 100) / 100,
      addedMs: Math.round((background.ms.p50 - sync.ms.p50) * 10) / 10,
      targets: { requestsRatio: 2, addedMs: 30 },
    },
    session: {
      turns: SESSION_TURNS,
      contextWindow: WINDOW,
      promptTokensAtTurn: Object.fromEntries([10, 25, 50, 100, 150, 200].map((n) => [n, at(n)])),
      maxPromptTokens: { turns1to50: maxOf(1, 50), turns51to100: maxOf(51, 100), turns101to200: maxOf(101, 200) },
      flat: maxOf(101, 200) <= maxOf(1, 100) * 1.1,
      summariesWritten: summaries,
      windowShareLimit: WINDOW * 0.8,
    },
  });
  await runtime.stop();
  provider.close();
  tool.close();
  await services.stop();
}

runBench(main);
