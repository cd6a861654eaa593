/**
 * `npm run bench` (part): what tracing costs. GET agent and a grounded converse turn through the
 * local app in process, with tracing off and on in alternating rounds (off, on ×3) after a warm-up, the same
 * requests each time; reports the means and the ratio on/off. Writes bench/results/tracing.json.
 */
import { benchApp, mean, runBench, startBenchServices, writeResults } from './common';

const GETS = Number(process.env.BENCH_TRACING_GETS ?? 1000);
const TURNS = Number(process.env.BENCH_TRACING_TURNS ?? 150);

async function main() {
  const services = await startBenchServices('cairn-bench-tracing');
  const { call, local } = await benchApp('ten_tracingbench');
  const { setLocalTracing } = await import('../local/tracing');
  const files = Array.from({ length: 200 }, (_, i) => ({ path: `doc-${i}.md`, content: `# Topic ${i}\n\nItems of kind ${i} can be returned within ${i % 60} days. Shipping of kind ${i} takes ${i % 9} days.` }));
  const source = await call('POST', '/v1/knowledge-sources', { name: 'bench', type: 'file-collection', files });
  await call('POST', `/v1/knowledge-sources/${source.data.id}/connect`, {});
  await local.ingestion!.drain();
  const agent = await call('POST', '/v1/agents', { name: 'Bench', model: 'gpt-4', capabilities: ['chat', 'document-search'], knowledgeSourceIds: [source.data.id] });

  const time = async (n: number, request: (i: number) => Promise<unknown>) => {
    const started = performance.now();
    for (let i = 0; i < n; i++) await request(i);
    return (performance.now() - started) / n;
  };
  const get = (i: number) => call('GET', `/v1/agents/${agent.data.id}?n=${i}`);
  const turn = (i: number) => call('POST', `/v1/agents/${agent.data.id}/converse`, { message: `How long do I have to return items of kind ${i % 200}?` });
  // Warm up both paths (caches, JIT) before measuring.
  // (The first rounds run slower whatever the mode: warm up well, then alternate three times.)
  await time(2000, get);
  await time(200, turn);
  const rounds: Record<'off' | 'on', { getMs: number[]; converseMs: number[] }> = { off: { getMs: [], converseMs: [] }, on: { getMs: [], converseMs: [] } };
  for (const mode of ['off', 'on', 'off', 'on', 'off', 'on'] as const) {
    setLocalTracing(mode === 'on');
    rounds[mode].getMs.push(await time(GETS, get));
    rounds[mode].converseMs.push(await time(TURNS, turn));
  }
  setLocalTracing(true);
  const avg = (values: number[]) => values.reduce((s, v) => s + v, 0) / values.length;
  const ratio = (a: number[], b: number[]) => Math.round((avg(a) / avg(b)) * 100) / 100;
  writeResults(
    'tracing',
    {
      date: new Date().toISOString(),
      node: process.version,
      getAgentMs: { off: mean(rounds.off.getMs), on: mean(rounds.on.getMs), ratio: ratio(rounds.on.getMs, rounds.off.getMs) },
      converseMs: { off: mean(rounds.off.converseMs), on: mean(rounds.on.converseMs), ratio: ratio(rounds.on.converseMs, rounds.off.converseMs) },
      rounds,
    },
    { print: true },
  );
  // Stopped, or the process would wait on them and `npm run bench` never reach the next benchmark.
  await services.stop();
}

runBench(main);
