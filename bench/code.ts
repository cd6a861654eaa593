/**
 * `npm run bench`: what running a small piece of tenant code costs. The job is a code step's
 * typical work (sum a list of line items with VAT, rounded); the baseline is the same computation
 * as a JSONata transform step's expression, evaluated in the same run.
 * - cold: a fresh `node` process's first job (QuickJS's WebAssembly compiled), median of 5;
 * - warm: a job in this thread once compiled (a fresh QuickJS runtime and context each, as always);
 * - pool: a job through local mode's worker threads (the hand-off included);
 * - throughput: 1,000 jobs through the pool, 16 at a time;
 * - an endless loop under a 500 ms limit: how long past the limit it runs before it is stopped.
 * Writes bench/results/code.json. Usage: npx tsx bench/code.ts
 */
import { spawnSync } from 'node:child_process';
import { mean, percentile, runBench, writeResults } from './common';

const SOURCE = 'export default function main({ parameters }) {\n  const net = parameters.items.reduce((sum, i) => sum + i.price * i.qty, 0);\n  return { gross: Math.round(net * (1 + parameters.vat) * 100) / 100 };\n}';
const EXPRESSION = '{"gross": $round($sum(parameters.items.(price * qty)) * (1 + parameters.vat), 2)}';
const ARGS = { parameters: { vat: 0.21, items: Array.from({ length: 20 }, (_, i) => ({ price: 1.5 + i, qty: 1 + (i % 3) })) } };
const job = { op: 'run' as const, language: 'javascript' as const, form: 'module' as const, source: SOURCE, args: ARGS, timeoutMs: 2000, memoryMb: 32 };

function coldMs(): number {
  const script = `const { runJavaScript } = await import(${JSON.stringify(new URL('../shared/code/javascript-sandbox.ts', import.meta.url).href)}); const t = performance.now(); const r = await runJavaScript(${JSON.stringify(job)}); if (!r.ok) throw new Error(JSON.stringify(r)); process.stdout.write(String(performance.now() - t));`;
  const out = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(out.stderr);
  return Number(out.stdout);
}

async function main() {
  const { runJavaScript } = await import('../shared/code/javascript-sandbox');
  const { localCodeRunner } = await import('../shared/code/local-code-runner');
  const { evaluateExpression } = await import('../shared/jsonata-expression');
  const timed = async (n: number, fn: () => Promise<unknown>) => {
    const ms: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      await fn();
      ms.push(performance.now() - t);
    }
    return { p50: percentile(ms, 0.5), p99: percentile(ms, 0.99), mean: mean(ms) };
  };
  const first = await runJavaScript(job);
  if (!first.ok) throw new Error(JSON.stringify(first));
  await timed(50, () => runJavaScript(job));
  const warm = await timed(500, () => runJavaScript(job));
  const jsonata = await timed(500, () => evaluateExpression(EXPRESSION, ARGS));
  await timed(20, () => localCodeRunner.run(job));
  const pool = await timed(300, () => localCodeRunner.run(job));
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < 1000) {
        next++;
        const result = await localCodeRunner.run(job);
        if (!result.ok) throw new Error(JSON.stringify(result));
      }
    }),
  );
  const perSecond = Math.round(1000 / ((performance.now() - started) / 1000));
  const cold = Array.from({ length: 5 }, coldMs).sort((a, b) => a - b)[2]!;
  // An endless loop under a 500 ms limit: how long after the limit QuickJS's interrupt stops it.
  const overruns: number[] = [];
  for (let i = 0; i < 5; i++) {
    const looped = await runJavaScript({ ...job, source: 'export default function main() { while (true) {} }', timeoutMs: 500 });
    if (looped.ok || looped.error.kind !== 'timeout') throw new Error(JSON.stringify(looped));
    overruns.push(looped.ms - 500);
  }
  writeResults('code', {
    date: new Date().toISOString(),
    job: 'sum 20 line items with VAT, rounded',
    coldFirstJobMs: Math.round(cold * 10) / 10,
    warmJobMs: warm,
    pooledJobMs: pool,
    baselineJsonataMs: jsonata,
    warmVsJsonata: Math.round((warm.p50 / jsonata.p50) * 100) / 100,
    throughputPerSecond: { jobs: 1000, concurrency: 16, workers: 2, perSecond },
    endlessLoopStoppedAfterLimitMs: { max: Math.round(Math.max(...overruns) * 10) / 10, mean: mean(overruns) },
    targets: { warmJobMs: 5, endlessLoopStoppedAfterLimitMs: 100 },
  });
  process.exit(0);
}

runBench(main);
