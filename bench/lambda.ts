/**
 * What each Lambda function costs before it serves anything: its code's size (as the CDK app
 * bundles it, `bundleFunction`: minified, split, the runtime's AWS SDK left out, zod without its
 * locales) in all (`bytes`) and what a start reads (`startBytes`: the handler's file and its
 * static imports; the rest loads on first use), and its cold import, the median of 7 fresh `node`
 * processes that each time only `import()` the handler's file (Node's own start-up not counted):
 * as deployed (`coldImportMs`: route sections and each kind of queued work load on first use) and
 * with PRELOAD=true (`preloadedImportMs`: all of it at start, as before it was loaded on first use;
 * what a first request adds lies between the two), and the instructions the import executes
 * (`importInstructionsM`, under valgrind where it is installed: repeatable where milliseconds are not).
 * The baseline of the run is a bare Hono app behind the Lambda adapter, bundled the same way
 * (`coldImportVsHello`); the runs go round by round over all the bundles.
 * Writes bench/results/lambda.json. Usage: npx tsx bench/lambda.ts
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BUNDLE_EXTERNALS, bundleFunction } from '../infra/constructs/function-bundle';
import { runBench, writeResults } from './common';

// Inside the project, so the AWS SDK the bundles leave out resolves as the runtime's would.
mkdirSync('node_modules/.cache', { recursive: true });
const out = resolve(mkdtempSync(join('node_modules/.cache', 'cairn-lambda-bench-')));
const RUNS = 7;

/**
 * The environment a deployed function starts with: what Lambda sets and what the stack gives the
 * functions (the union of all of theirs, so no function's start is flattered; configuration builds
 * the schema of each variable that is set). No endpoint is called at import.
 */
const LAMBDA_ENV = {
  AWS_REGION: 'us-east-1',
  AWS_LAMBDA_FUNCTION_NAME: 'bench',
  AWS_LAMBDA_RUNTIME_API: '127.0.0.1:9001',
  TABLE_NAME: 'cairn',
  LOG_LEVEL: 'silent',
  POWERTOOLS_SERVICE_NAME: 'agents',
  METRICS_NAMESPACE: 'Cairn/bench',
  CURSOR_SIGNING_KEY: 'k'.repeat(64),
  INGESTION_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/ingestion',
  WORKFLOW_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/workflow-steps',
  WEBHOOK_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/webhooks',
  WORKFLOW_QUEUE_ARN: 'arn:aws:sqs:us-east-1:123456789012:workflow-steps',
  SECRETS_KMS_KEY_ID: 'arn:aws:kms:us-east-1:123456789012:key/bench',
  BLOB_BUCKET: 'cairn-bench-data',
  PROVIDER_SECRETS_ARN: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:providers',
  SCHEDULE_GROUP_NAME: 'cairn-bench',
  SCHEDULER_ROLE_ARN: 'arn:aws:iam::123456789012:role/scheduler',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  PATH: process.env.PATH ?? '',
};

function bundle(name: string, entry: string) {
  const files = bundleFunction(entry, join(out, name), { external: BUNDLE_EXTERNALS, sourcemap: true });
  const sum = (list: typeof files) => list.reduce((total, file) => total + file.bytes, 0);
  return { file: join(out, name, 'index.mjs'), bytes: sum(files), startBytes: sum(files.filter((f) => f.atStart)) };
}

/** The global Lambda's Node.js runtime gives response-streaming handlers (what the agents group exports). */
const runtimeGlobals = join(out, 'lambda-runtime.mjs');
writeFileSync(runtimeGlobals, 'globalThis.awslambda = { streamifyResponse: (f) => f, HttpResponseStream: { from: (s) => s } };\n');

/** Milliseconds one fresh process takes to import the bundle (with all it loads on first use when `preload`). */
function coldImport(file: string, preload: boolean): number {
  const script = `const t = performance.now(); await import(${JSON.stringify(file)}); process.stdout.write(String(performance.now() - t));`;
  const env = { ...LAMBDA_ENV, PRELOAD: String(preload) };
  const printed = execFileSync(process.execPath, ['--import', runtimeGlobals, '--input-type=module', '-e', script], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return Number(printed);
}

/**
 * Millions of instructions the import executes, counted by valgrind's callgrind (Node's own start
 * subtracted): the same for the same bundle whatever else the machine is doing, where milliseconds
 * on a shared machine move by half. Undefined where valgrind is not installed.
 */
function importInstructions(file: string | undefined): number | undefined {
  const script = file ? `await import(${JSON.stringify(file)})` : 'await 0';
  const { stderr } = spawnSync('valgrind', ['--tool=callgrind', '--callgrind-out-file=/dev/null', process.execPath, '--import', runtimeGlobals, '--input-type=module', '-e', script], { env: LAMBDA_ENV, encoding: 'utf8' });
  const collected = /Collected : (\d+)/.exec(stderr ?? '')?.[1];
  return collected === undefined ? undefined : Number(collected) / 1e6;
}

/** The median of a function's fresh imports, in ms to a tenth. */
function median(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  return Math.round(sorted[Math.floor(sorted.length / 2)]! * 10) / 10;
}

/** A bare Hono app behind the Lambda adapter, bundled the same way: the baseline of the run. */
function helloEntry(): string {
  const entry = join(out, 'hello-handler.ts');
  writeFileSync(entry, "import { Hono } from 'hono';\nimport { handle } from 'hono/aws-lambda';\n\nexport const handler = handle(new Hono().get('/hello', (c) => c.text('hello')));\n");
  return entry;
}

async function main() {
  const functions = readdirSync('functions', { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .filter((name) => statSync(join('functions', name, 'handler.ts'), { throwIfNoEntry: false }));
  const bundles = [...functions.map((name) => ({ name, ...bundle(name, join('functions', name, 'handler.ts')) })), { name: 'hello', ...bundle('hello', helloEntry()) }];
  // Round by round, every bundle once a round: a noisy spell of the machine then falls on all of
  // them alike instead of on the seven runs of one.
  const times = new Map(bundles.map((b) => [b.name, { cold: [] as number[], preloaded: [] as number[] }]));
  for (let round = 0; round < RUNS; round++) {
    for (const b of bundles) {
      times.get(b.name)!.cold.push(coldImport(b.file, false));
      times.get(b.name)!.preloaded.push(coldImport(b.file, true));
    }
  }
  const nodeStart = importInstructions(undefined);
  const measured = (b: (typeof bundles)[number]) => {
    const instructions = nodeStart === undefined ? undefined : importInstructions(b.file);
    return {
      bytes: b.bytes,
      startBytes: b.startBytes,
      coldImportMs: median(times.get(b.name)!.cold),
      preloadedImportMs: median(times.get(b.name)!.preloaded),
      ...(instructions === undefined ? {} : { importInstructionsM: Math.round(instructions - nodeStart!) }),
    };
  };
  const hello = measured(bundles.at(-1)!);
  const results: Record<string, ReturnType<typeof measured> & { coldImportVsHello: number }> = {};
  for (const b of bundles.slice(0, -1)) {
    const m = measured(b);
    results[b.name] = { ...m, coldImportVsHello: Math.round((m.coldImportMs / hello.coldImportMs) * 100) / 100 };
    process.stdout.write(`${b.name}: ${m.bytes} bytes (${m.startBytes} read at start), cold import ${m.coldImportMs} ms (${results[b.name]!.coldImportVsHello}× bare Hono's ${hello.coldImportMs} ms; ${m.preloadedImportMs} ms preloaded)${m.importInstructionsM === undefined ? '' : `, ${m.importInstructionsM} M instructions`}\n`);
  }
  if (!process.env.KEEP_BUNDLES) rmSync(out, { recursive: true, force: true });
  writeResults('lambda', { date: new Date().toISOString(), node: process.version, runs: RUNS, targets: { bytes: 1_400_000, coldImportMs: 80, except: ['ingestion'] }, baseline: { 'bare Hono (hono/aws-lambda)': hello }, functions: results });
}

runBench(main);
