import { spawn as spawnProcess, type ChildProcess } from 'node:child_process';

/**
 * A detached process that ends `childPid` once `parentPid` is gone. `process.on('exit')` covers
 * every way Node ends but SIGKILL; this covers that one, so a local service (DynamoDB Local,
 * s3rver) never outlives its server and keeps a data directory to itself.
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

export function startWatchdog(childPid: number): number | undefined {
  const watchdog = spawnProcess(process.execPath, ['-e', WATCHDOG, String(process.pid), String(childPid)], { detached: true, stdio: 'ignore' });
  watchdog.unref();
  return watchdog.pid;
}

/** Waits until the child's HTTP server answers (any answer), failing if it exits first. */
export async function waitUntilReady(name: string, endpoint: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited with code ${child.exitCode}`);
    try {
      // Any HTTP answer means the server listens (DynamoDB Local rejects a request without a target politely).
      await fetch(endpoint, { method: 'POST', signal: AbortSignal.timeout(1000) });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${name} did not start within ${timeoutMs} ms`);
}


/** A child never outlives the Node process that started it on any exit Node sees (the watchdog covers SIGKILL). */
export function killWithThisProcess(child: ChildProcess): void {
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  child.once('exit', () => process.off('exit', killOnExit));
}

/** Asks a child to end (SIGTERM), and makes it (SIGKILL) if it has not within `graceMs`. */
export function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  return new Promise<void>((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(force);
      done();
    });
    child.kill('SIGTERM');
  });
}
