import { spawn, type ChildProcess } from 'node:child_process';

export interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Runs `npx tsx <script>` from the repository root with extra environment. */
export function runScript(script: string, args: string[], env: Record<string, string>): Started {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: new URL('../..', import.meta.url).pathname,
    env: { ...process.env, NODE_NO_WARNINGS: '1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

export async function waitFor(predicate: () => boolean, what: string, timeoutMs = 45_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
