import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSContext, type QuickJSHandle, type QuickJSWASMModule } from 'quickjs-emscripten-core';
import variant from '@jitl/quickjs-wasmfile-release-sync';
import { CODE_LIMITS, type CodeFailure, type CodeJob, type CodeResult } from './code-job';

/**
 * JavaScript in QuickJS compiled to WebAssembly: every job gets a runtime and context of its own,
 * made for it and thrown away after, with a memory limit, a stack limit and an interrupt handler
 * for its time. The context has the language and `console.log`, nothing of the host: no
 * `process`, `require`, module loader (`import()` fails), `fetch`, timers or file system, so a
 * `Function` constructor, a prototype or an error reached from inside leads only to QuickJS's own
 * objects. Runs synchronously: callers keep it off a thread that serves requests.
 */
/** The QuickJS WebAssembly beside the code in Lambda (the stack ships it there under this name). */
export const QUICKJS_WASM_FILE = 'quickjs.wasm';
const wasmPath = () => (process.env.LAMBDA_TASK_ROOT ? join(process.env.LAMBDA_TASK_ROOT, QUICKJS_WASM_FILE) : createRequire(import.meta.url).resolve('@jitl/quickjs-wasmfile-release-sync/wasm'));
const wasmBinary = async () => {
  const bytes = await readFile(wasmPath());
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
};

let loading: Promise<QuickJSWASMModule> | undefined;
/** The WebAssembly module, compiled once per process (about 15 ms), and again after one was spoiled. */
const quickJs = () => (loading ??= newQuickJSWASMModuleFromVariant(newVariant(variant, { wasmBinary })));

/** Runs a job (see the top of this file). */
export async function runJavaScript(job: CodeJob): Promise<CodeResult> {
  const QuickJS = await quickJs();
  return runIn(QuickJS, job, () => {
    // QuickJS can fail its own checks while freeing a runtime a job left in disorder (a stack
    // overflow does): that module is not used again, the next job gets a fresh one.
    if (loading) void loading.then((m) => m === QuickJS && (loading = undefined));
  });
}

const FILE = 'main.js';
const TIMED_OUT: CodeFailure = { kind: 'timeout', message: 'The code ran past its time limit (timeoutMs) and was stopped' };
/** A script's body goes inside an async function: its line numbers are one more than the source's. */
const SCRIPT_PREFIX = '(async () => {\n';

function runIn(QuickJS: QuickJSWASMModule, job: CodeJob, spoiled: () => void): CodeResult {
  const started = performance.now();
  const logs = new LogLines();
  const runtime = QuickJS.newRuntime();
  runtime.setMemoryLimit(Math.min(job.memoryMb, CODE_LIMITS.memoryMb.max) * 1024 * 1024);
  runtime.setMaxStackSize(262144);
  const deadline = Date.now() + Math.min(job.timeoutMs, CODE_LIMITS.timeoutMs.max);
  runtime.setInterruptHandler(() => Date.now() > deadline);
  const vm = runtime.newContext();
  const done = (outcome: { value: unknown } | { error: CodeFailure }): CodeResult =>
    'value' in outcome ? { ok: true, value: outcome.value, logs: logs.lines, ms: performance.now() - started } : { ok: false, error: outcome.error, logs: logs.lines, ms: performance.now() - started };
  try {
    const asModule = job.form === 'module' || /^\s*export\s/m.test(job.source);
    const code = asModule ? job.source : `${SCRIPT_PREFIX}${job.source}\n})()`;
    const shift = asModule ? 0 : 1;
    if (job.op === 'check') {
      const compiled = vm.evalCode(code, FILE, { type: asModule ? 'module' : 'global', compileOnly: true });
      if (compiled.error) return done({ error: failureOf(vm, compiled.error, shift, true) });
      compiled.value.dispose();
      return done({ value: null });
    }
    installConsole(vm, logs, deadline);
    const evaluated = vm.evalCode(code, FILE, { type: asModule ? 'module' : 'global' });
    if (evaluated.error) return done({ error: failureOf(vm, evaluated.error, shift, false) });
    // A module evaluates to a promise of its namespace; a script to the promise of its body's return.
    const settled = settle(runtime, vm, evaluated.value);
    if ('error' in settled) return done({ error: failureOf(vm, settled.error, shift, false) });
    let result = settled.value;
    if (asModule) {
      const main = vm.getProp(result, 'default');
      result.dispose();
      if (vm.typeof(main) !== 'function') {
        main.dispose();
        return done({ error: { kind: 'error', message: 'The source must export a default function: export default function main({input, parameters, steps}) { … }' } });
      }
      const args = argsOf(vm, job.args);
      const called = vm.callFunction(main, vm.undefined, args);
      main.dispose();
      args.dispose();
      if (called.error) return done({ error: failureOf(vm, called.error, shift, false) });
      const returned = settle(runtime, vm, called.value);
      if ('error' in returned) return done({ error: failureOf(vm, returned.error, shift, false) });
      result = returned.value;
    }
    const outcome = jsonOf(vm, result);
    // Work done past the deadline (a host call's, or one the code caught its interruption of) does not count as done.
    if (Date.now() > deadline) return done({ error: TIMED_OUT });
    return done(outcome);
  } catch (error) {
    // The host's own stack ran out inside WebAssembly (a value nested too deep for a C routine):
    // the job fails as the code's error, and the module, left mid-call, is not used again.
    if (!(error instanceof RangeError)) throw error;
    spoiled();
    return done({ error: { kind: 'error', message: 'RangeError: the code nested a value too deeply (stack overflow)' } });
  } finally {
    try {
      vm.dispose();
      runtime.dispose();
    } catch {
      spoiled();
    }
  }
}

/** `console.log` (and its kin) as lines, up to CODE_LIMITS.logBytes. */
class LogLines {
  lines: string[] = [];
  private bytes = 0;
  /** Characters a line may still have (a character takes up to 4 bytes, so this never passes the bytes left). */
  get room(): number {
    return Math.max(0, Math.floor((CODE_LIMITS.logBytes - this.bytes) / 4));
  }
  add(line: string, cut: boolean) {
    if (this.room === 0) return;
    this.bytes += Buffer.byteLength(line) + 1;
    this.lines.push(line);
    if (cut || this.room === 0) {
      this.bytes = CODE_LIMITS.logBytes;
      this.lines.push(`… (logs cut at ${CODE_LIMITS.logBytes / 1024} KB)`);
    }
  }
}

/**
 * `console` is written in the sandbox's own JavaScript: arguments are formatted there (under its
 * time, memory and stack limits) and cut to the room the logs have left before one string crosses
 * to the host, which only keeps it. Past the cap a call does nothing; past the deadline the host
 * refuses the call as an interruption, so a loop of logging cannot outrun the time limit.
 */
const CONSOLE = `(emit) => {
  let room = emit(undefined, false);
  const text = (a) => { if (typeof a === 'string') return a; try { const json = JSON.stringify(a); return json === undefined ? String(a) : json; } catch (e) { return String(a); } };
  const log = (...args) => {
    if (room <= 0) return;
    let line = '';
    for (const a of args) {
      line += (line ? ' ' : '') + text(a);
      if (line.length > room) break;
    }
    room = line.length > room ? emit(line.slice(0, room), true) : emit(line, false);
  };
  return { log, info: log, warn: log, error: log, debug: log };
}`;

function installConsole(vm: QuickJSContext, logs: LogLines, deadline: number) {
  const emit = vm.newFunction('emit', (line: QuickJSHandle, cut: QuickJSHandle) => {
    if (Date.now() > deadline) throw Object.assign(new Error('interrupted'), { name: 'InternalError' });
    if (vm.typeof(line) === 'string') logs.add(vm.getString(line), vm.dump(cut) === true);
    return vm.newNumber(logs.room);
  });
  const make = vm.unwrapResult(vm.evalCode(CONSOLE, 'console.js'));
  const console = vm.unwrapResult(vm.callFunction(make, vm.undefined, emit));
  vm.setProp(vm.global, 'console', console);
  for (const handle of [emit, make, console]) handle.dispose();
}

/** The arguments as a value of the context, made by its own JSON.parse (nothing of the host is passed in). */
function argsOf(vm: QuickJSContext, args: unknown): QuickJSHandle {
  const text = vm.newString(JSON.stringify(args ?? {}));
  const parse = vm.unwrapResult(vm.evalCode('JSON.parse'));
  const parsed = vm.unwrapResult(vm.callFunction(parse, vm.undefined, text));
  parse.dispose();
  text.dispose();
  return parsed;
}

/** A value that may be a promise, settled: the context's pending jobs run until nothing is left. */
function settle(runtime: ReturnType<QuickJSWASMModule['newRuntime']>, vm: QuickJSContext, handle: QuickJSHandle): { value: QuickJSHandle } | { error: QuickJSHandle } {
  const jobs = runtime.executePendingJobs(-1);
  if (jobs.error) {
    handle.dispose();
    return { error: jobs.error };
  }
  const state = vm.getPromiseState(handle);
  if (state.type === 'fulfilled') {
    if (state.notAPromise) return { value: handle };
    handle.dispose();
    return { value: state.value };
  }
  handle.dispose();
  if (state.type === 'rejected') return { error: state.error };
  return { error: vm.newError('main returned a promise that never settles (there are no timers or I/O to wait for)') };
}

/** The result as JSON text made inside the context, then read here: a value JSON cannot hold fails saying so. */
function jsonOf(vm: QuickJSContext, value: QuickJSHandle): { value: unknown } | { error: CodeFailure } {
  const stringify = vm.unwrapResult(vm.evalCode('JSON.stringify'));
  const kind = vm.typeof(value);
  const text = vm.callFunction(stringify, vm.undefined, value);
  stringify.dispose();
  value.dispose();
  if (text.error) {
    const message = String((vm.dump(text.error) as { message?: string } | undefined)?.message ?? 'cannot be written as JSON');
    text.error.dispose();
    return { error: { kind: 'result', message: `The result is not JSON: ${message}` } };
  }
  const json: unknown = vm.dump(text.value);
  text.value.dispose();
  if (typeof json !== 'string') return { error: { kind: 'result', message: `The result is not JSON: main returned ${kind === 'undefined' ? 'undefined (return a value)' : `a ${kind}`}` } };
  if (Buffer.byteLength(json) > CODE_LIMITS.resultBytes) return { error: { kind: 'result', message: `The result is ${Buffer.byteLength(json)} bytes of JSON; at most ${CODE_LIMITS.resultBytes} are kept` } };
  return { value: JSON.parse(json) as unknown };
}

/** What went wrong, with where: QuickJS names the place in the error's stack (`main.js:line:column`). */
function failureOf(vm: QuickJSContext, handle: QuickJSHandle, shift: number, compiling: boolean): CodeFailure {
  const dumped: unknown = vm.dump(handle);
  handle.dispose();
  const error = (typeof dumped === 'object' && dumped !== null ? dumped : { message: String(dumped) }) as { name?: string; message?: string; stack?: string };
  const message = String(error.message ?? dumped);
  const where = new RegExp(`${FILE.replace('.', '\\.')}:(\\d+)(?::(\\d+))?`).exec(error.stack ?? '');
  const position = where ? { line: Math.max(1, Number(where[1]) - shift), ...(where[2] ? { column: Number(where[2]) } : {}) } : {};
  if (error.name === 'InternalError' && message === 'interrupted') return { ...TIMED_OUT, ...position };
  if (error.name === 'InternalError' && /out of memory/.test(message)) return { kind: 'memory', message: 'The code used more memory than its limit (memoryMb) and was stopped', ...position };
  if (error.name === 'SyntaxError' || compiling) return { kind: 'syntax', message: `${error.name ?? 'SyntaxError'}: ${message}`, ...position };
  return { kind: 'error', message: `${error.name ?? 'Error'}: ${message}`, ...position };
}
