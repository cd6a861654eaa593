/**
 * What each Lambda function costs before it serves anything: its bundle's size (minified, as the
 * CDK app bundles it: the runtime's AWS SDK left out, zod without its locales) and its cold import, the median of 7 fresh `node` processes that each time
 * only `import()` the bundle (Node's own start-up not counted). Writes bench/results/lambda.json.
 * Usage: npx tsx bench/lambda.ts
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { BUNDLE_EXTERNALS, ESBUILD_OPTIONS } from '../infra/constructs/app-function';
import { runBench, writeResults } from './common';

// Inside the project, so the AWS SDK the bundles leave out resolves as the runtime's would.
mkdirSync('node_modules/.cache', { recursive: true });
const out = resolve(mkdtempSync(join('node_modules/.cache', 'cairn-lambda-bench-')));
const RUNS = 7;

/** The environment a deployed function starts with (no endpoints are called at import). */
const LAMBDA_ENV = {
  AWS_REGION: 'us-east-1',
  AWS_LAMBDA_FUNCTION_NAME: 'bench',
  TABLE_NAME: 'cairn',
  LOG_LEVEL: 'silent',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  PATH: process.env.PATH ?? '',
};

async function bundle(name: string, entry: string) {
  const outfile = join(out, name, 'index.mjs');
  await build({ ...ESBUILD_OPTIONS, entryPoints: [entry], external: BUNDLE_EXTERNALS, outfile });
  return outfile;
}

/** The global Lambda's Node.js runtime gives response-streaming handlers (what the agents group exports). */
const runtimeGlobals = join(out, 'lambda-runtime.mjs');
writeFileSync(runtimeGlobals, 'globalThis.awslambda = { streamifyResponse: (f) => f, HttpResponseStream: { from: (s) => s } };\n');

/** Milliseconds one fresh process takes to import the bundle. */
function coldImport(file: string): number {
  const script = `const t = performance.now(); await import(${JSON.stringify(file)}); process.stdout.write(String(performance.now() - t));`;
  const printed = execFileSync(process.execPath, ['--import', runtimeGlobals, '--input-type=module', '-e', script], { env: LAMBDA_ENV, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return Number(printed);
}

async function main() {
  const functions = readdirSync('functions', { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .filter((name) => statSync(join('functions', name, 'handler.ts'), { throwIfNoEntry: false }));
  const results: Record<string, { bytes: number; coldImportMs: number }> = {};
  for (const name of functions) {
    const file = await bundle(name, join('functions', name, 'handler.ts'));
    const times = Array.from({ length: RUNS }, () => coldImport(file)).sort((a, b) => a - b);
    results[name] = { bytes: statSync(file).size, coldImportMs: Math.round(times[Math.floor(RUNS / 2)]! * 10) / 10 };
    process.stdout.write(`${name}: ${results[name].bytes} bytes, cold import ${results[name].coldImportMs} ms\n`);
  }
  if (!process.env.KEEP_BUNDLES) rmSync(out, { recursive: true, force: true });
  writeResults('lambda', { date: new Date().toISOString(), node: process.version, runs: RUNS, targets: { bytes: 1_000_000, coldImportMs: 80, except: ['ingestion'] }, functions: results });
}

runBench(main);
