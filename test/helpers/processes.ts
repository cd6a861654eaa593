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
    env: { ...inherited(), NODE_NO_WARNINGS: '1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
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

/** The test process's environment without what configures this test file's own store and secrets. */
function inherited(): NodeJS.ProcessEnv {
  const { DYNAMODB_ENDPOINT: _d, PLATFORM_ADMIN_TOKEN: _a, PLATFORM_TOKEN_KEY: _k, CURSOR_SIGNING_KEY: _c, ...rest } = process.env;
  return rest;
}
