import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { codeRunsIsolated, localCodeRunner } from '../shared/code/local-code-runner';
import { CODE_LIMITS, type CodeJob } from '../shared/code/code-job';
import { runJavaScript } from '../shared/code/javascript-sandbox';
import { call, type TestResponse } from './helpers/http';
import { newTenant, type TestTenant } from './helpers/tenant';
import { testLocal, testRt } from './helpers/runtime';

/**
 * Tenants' code in QuickJS through local mode's worker threads: a workflow `code` step reads the
 * execution's input, parameters and earlier steps, returns JSON and logs lines; a source that does
 * not parse is a 400 naming it, with line and column; errors, limits and non-JSON results fail the
 * step saying which; nothing of the host is reachable from inside.
 */
const app = createLocalApp(testRt);
const job = (source: string, extra: Partial<CodeJob> = {}): CodeJob => ({ op: 'run', language: 'javascript', source, form: 'module', args: {}, timeoutMs: 2000, memoryMb: 32, ...extra });
const run = (source: string, extra: Partial<CodeJob> = {}) => localCodeRunner.run(job(source, extra));

describe('code steps', () => {
  let t: TestTenant;
  const api = (method: string, path: string, body?: unknown) => call(app, method, path, { key: t.apiKey, body });
  const execute = async (workflowId: string, body: unknown) => {
    const started = await api('POST', `/v1/workflows/${workflowId}/execute`, { ...(body as object), mode: 'async' });
    await testLocal.workflowSteps!.drain();
    return (await api('GET', `/v1/workflows/${workflowId}/executions/${started.body.data.id}`)).body.data;
  };
  const stepOf = (execution: TestResponse['body'], id: string): TestResponse['body'] => (execution.steps as Array<{ id: string }>).find((s) => s.id === id);
  beforeAll(async () => {
    t = await newTenant();
  });

  it('runs with the input, parameters and earlier steps, returns JSON, keeps its logs and counts its time', async () => {
    const created = await api('POST', '/v1/workflows', {
      name: 'price',
      steps: [
        { id: 'parse', type: 'transform', expression: '{"items": [{"price": 10.5, "qty": 2}, {"price": 3.25, "qty": 4}]}' },
        {
          id: 'total',
          type: 'code',
          source: [
            'export default async function main({ input, parameters, steps }) {',
            '  const net = steps.parse.output.items.reduce((sum, i) => sum + i.price * i.qty, 0);',
            '  console.log("net", net, { vat: parameters.vat });',
            '  return { customer: input.trim(), gross: Math.round(net * (1 + parameters.vat) * 100) / 100 };',
            '}',
          ].join('\n'),
        },
        { id: 'reply', type: 'transform', expression: 'steps.total.output.customer & " owes " & $string(steps.total.output.gross)' },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const exe = await execute(created.body.data.id, { input: ' Ada ', parameters: { vat: 0.21 } });
    expect(exe.status).toBe('succeeded');
    expect(stepOf(exe, 'total')).toMatchObject({ status: 'succeeded', output: { customer: 'Ada', gross: 41.14 }, logs: ['net 34 {"vat":0.21}'] });
    expect(exe.output).toBe('Ada owes 41.14');
    const usage = (await api('GET', '/v1/usage?groupBy=day')).body.data;
    expect(usage.totals.codeMs).toBeGreaterThan(0);
  });

  it('runs inside a map with each item and its index', async () => {
    const created = await api('POST', '/v1/workflows', {
      name: 'each',
      steps: [{ id: 'each', type: 'map', items: '[10, 20, 30]', steps: [{ id: 'scale', type: 'code', source: 'export default ({ item, index }) => item * (index + 1)' }] }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const exe = await execute(created.body.data.id, {});
    expect(exe.status).toBe('succeeded');
    expect(stepOf(exe, 'each').output).toMatchObject({ results: [10, 40, 90] });
  });

  it('refuses a source that does not parse, naming the field with line and column', async () => {
    const bad = await api('POST', '/v1/workflows', { name: 'broken', steps: [{ id: 'c', type: 'code', source: 'export default function main() {\n  return 1 +;\n}' }] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('steps[0].config.source');
    expect(bad.body.error.message).toMatch(/line 2, column \d+/);
    const limit = await api('POST', '/v1/workflows', { name: 'slow', steps: [{ id: 'c', type: 'code', source: 'export default () => 1', timeoutMs: 60_000 }] });
    expect(limit.status).toBe(400);
    expect(limit.body.error.details.field).toBe('steps[0].config.timeoutMs');
  });

  it('fails the step without a retry on a thrown error (with its line), a limit, or a result that is not JSON, keeping the logs', async () => {
    const wf = async (source: string, extra: Record<string, unknown> = {}) =>
      (await api('POST', '/v1/workflows', { name: 'fails', steps: [{ id: 'c', type: 'code', source, ...extra }] })).body.data.id as string;
    const thrown = await execute(await wf('export default function main() {\n  console.log("before");\n  throw new Error("no such customer");\n}'), {});
    expect(thrown.status).toBe('failed');
    expect(stepOf(thrown, 'c')).toMatchObject({ status: 'failed', attempt: 1, logs: ['before'], error: { code: 'UNPROCESSABLE' } });
    expect(stepOf(thrown, 'c').error.message).toBe('Error: no such customer (line 3, column 18)');

    const looped = await execute(await wf('export default function main() { while (true) {} }', { timeoutMs: 300 }), {});
    expect(stepOf(looped, 'c').error.message).toMatch(/time limit \(timeoutMs\)/);
    const bomb = await execute(await wf('export default function main() { const a = []; for (let i = 0;; i++) a.push({ i, s: "y" + i }); }', { memoryMb: 8 }), {});
    expect(stepOf(bomb, 'c').error.message).toMatch(/memory/);
    const undef = await execute(await wf('export default function main() {}'), {});
    expect(stepOf(undef, 'c').error.message).toMatch(/not JSON: main returned undefined/);
  });
});

describe('the JavaScript sandbox', () => {
  it('stops an endless loop at its time limit, and the next job runs', async () => {
    const looped = await run('export default function main() { while (true) {} }', { timeoutMs: 500 });
    // Stopped by QuickJS's interrupt at its limit (bench/code.ts measures how soon after it), not left to run on.
    expect(looped).toMatchObject({ ok: false, error: { kind: 'timeout', message: /timeoutMs/ } });
    expect(looped.ms).toBeGreaterThanOrEqual(500);
    expect(looped.ms).toBeLessThan(2_000);
    expect(await run('export default () => 42')).toMatchObject({ ok: true, value: 42 });
    // In worker threads, not the thread that serves requests.
    expect(codeRunsIsolated()).toBe(true);
  });

  it('stops a memory bomb and an endless recursion, and the next run is whole', async () => {
    expect(await run('export default function main() { const a = []; for (let i = 0;; i++) a.push({ i, s: "x" + i }); }', { memoryMb: 16 })).toMatchObject({ ok: false, error: { kind: 'memory' } });
    expect(await run('export default function main() { const f = () => f(); return f(); }')).toMatchObject({ ok: false, error: { kind: 'error', message: 'InternalError: stack overflow' } });
    expect(await run('export default () => [1, 2, 3].map((n) => n * 2)')).toMatchObject({ ok: true, value: [2, 4, 6] });
  });

  it('counts logging against the time limit, does nothing once the logs are full, and fails a value nested too deep as the code’s error', async () => {
    const logLoop = 'export default function main() { const big = "x".repeat(20_000_000); for (;;) { try { console.log(big, { big }); } catch {} } }';
    const deep = 'export default function main() { let o = {}; for (let i = 0; i < 100000; i++) o = { o }; return o; }';
    const deepLog = 'export default function main() { let o = {}; for (let i = 0; i < 100000; i++) o = { o }; console.log(o); return 1; }';
    // In a worker, and in this thread as the Lambda code runner runs it.
    for (const runner of [run, (source: string, extra: Partial<CodeJob> = {}) => runJavaScript(job(source, extra))]) {
      const logged = await runner(logLoop, { timeoutMs: 1000, memoryMb: 128 });
      expect(logged).toMatchObject({ ok: false, error: { kind: 'timeout' } });
      expect(logged.ms).toBeLessThan(5_000);
      expect(logged.logs.join('\n').length).toBeLessThanOrEqual(CODE_LIMITS.logBytes + 100);
      expect(logged.logs.at(-1)).toMatch(/logs cut/);
      // QuickJS's own stack check or the host's, whichever runs out first (a worker's stack is not this thread's): the job's error either way.
      expect(await runner(deep, { memoryMb: 128, timeoutMs: 15_000 })).toMatchObject({ ok: false, error: { message: /stack overflow/ } });
      // Logged, it ends as a result (QuickJS's check caught inside console.log, which then logs what it can) or as the error.
      const deepLogged = await runner(deepLog, { memoryMb: 128, timeoutMs: 15_000 });
      expect(deepLogged.ok ? String(deepLogged.value) : deepLogged.error.message).toMatch(/^1$|stack overflow/);
      expect(await runner('export default () => { console.log("a", 1, { b: [2] }); return 42 }')).toMatchObject({ ok: true, value: 42, logs: ['a 1 {"b":[2]}'] });
    }
  }, 60_000);

  it('reaches nothing of the host: no process, require, fetch, timers, modules; pollution stays in its run', async () => {
    const escapes = [
      'export default function main() { return this.constructor.constructor("return process")() }',
      'export default function main() { return (function () {}).constructor("return process")().env }',
      'export default function main() { return require("fs") }',
      'export default async function main() { return (await import("fs")).readFileSync("/etc/passwd", "utf8") }',
      'export default function main() { return globalThis.fetch("http://127.0.0.1/") }',
      'export default function main() { return setTimeout(() => 1, 1) }',
      'export default function main() { try { null.x } catch (e) { return e.constructor.constructor("return process")() } }',
    ];
    for (const source of escapes) {
      const result = await run(source);
      expect(result.ok, source).toBe(false);
    }
    expect(await run('export default () => [typeof process, typeof require, typeof fetch, typeof setTimeout, typeof Buffer]')).toMatchObject({ ok: true, value: ['undefined', 'undefined', 'undefined', 'undefined', 'undefined'] });
    expect(await run('export default () => { Object.prototype.polluted = "yes"; Array.prototype.map = null; return ({}).polluted }')).toMatchObject({ ok: true, value: 'yes' });
    expect(await run('export default () => [({}).polluted ?? null, typeof [].map]')).toMatchObject({ ok: true, value: [null, 'function'] });
  });

  it('says why a result is not JSON, and runs a script whose top-level return gives the result', async () => {
    expect(await run('export default () => () => 1')).toMatchObject({ ok: false, error: { kind: 'result', message: /a function/ } });
    expect(await run('export default () => { const a = {}; a.self = a; return a }')).toMatchObject({ ok: false, error: { kind: 'result', message: /circular/ } });
    expect(await run('const n = 6;\nreturn n * 7;', { form: 'script' })).toMatchObject({ ok: true, value: 42 });
    expect(await run('const n = 6;\nnull.x;', { form: 'script' })).toMatchObject({ ok: false, error: { kind: 'error', line: 2 } });
  });
});
