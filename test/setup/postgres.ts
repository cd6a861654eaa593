import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../local/free-port';

/** Where the PostgreSQL tests connect, and whether that server checks passwords. */
export interface PostgresTarget {
  host: string;
  port: number;
  database: string;
  username: string;
  password: string;
  /** A server with password authentication, so wrong credentials can be tested. */
  checksPasswords: boolean;
  kind: 'private cluster' | 'local server' | 'pglite';
}

const PASSWORD = 'cairn-test-password';

function reachable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.setTimeout(1000);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
    socket.connect(port, '127.0.0.1');
  });
}

function binDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const version = readdirSync(root).sort().pop();
  const dir = version && join(root, version, 'bin');
  return dir && existsSync(join(dir, 'initdb')) ? dir : undefined;
}

/**
 * A private PostgreSQL cluster with SCRAM password authentication, started for this run (a few
 * seconds): a real server whose state no other test or session shares. initdb refuses to run as
 * root, so as root it runs as the postgres user.
 */
async function privateCluster(bin: string): Promise<{ target: PostgresTarget; stop: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-pg-'));
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]) => {
    const full = join(bin, cmd);
    const result = asRoot
      ? spawnSync('runuser', ['-u', 'postgres', '--', full, ...args], { encoding: 'utf8' })
      : spawnSync(full, args, { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`${cmd} failed: ${result.stderr || result.stdout}`);
  };
  const pwfile = join(dir, 'pw');
  writeFileSync(pwfile, PASSWORD);
  if (asRoot) execFileSync('chown', ['-R', 'postgres', dir]);
  else chownSync(dir, process.getuid!(), process.getgid!());
  run('initdb', ['-D', join(dir, 'data'), '-U', 'cairn', `--pwfile=${pwfile}`, '--auth=scram-sha-256', '-E', 'UTF8', '--no-sync', '--locale=C']);
  const port = await freePort();
  run('pg_ctl', ['-D', join(dir, 'data'), '-l', join(dir, 'log'), '-w', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`, 'start']);
  return {
    target: { host: '127.0.0.1', port, database: 'postgres', username: 'cairn', password: PASSWORD, checksPasswords: true, kind: 'private cluster' },
    stop: () => {
      try {
        run('pg_ctl', ['-D', join(dir, 'data'), '-m', 'immediate', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** PGlite (PostgreSQL compiled to WebAssembly) behind its socket server: works on any machine. */
async function pglite(): Promise<{ target: PostgresTarget; stop: () => Promise<void> }> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const db = await PGlite.create();
  const port = await freePort();
  const server = new PGLiteSocketServer({ db, port, host: '127.0.0.1' });
  await server.start();
  return {
    target: { host: '127.0.0.1', port, database: 'postgres', username: 'postgres', password: 'pglite-ignores-this-password', checksPasswords: false, kind: 'pglite' },
    stop: async () => {
      await server.stop();
      await db.close();
    },
  };
}

/** The best PostgreSQL this machine offers: a private cluster, else the server on 5432, else PGlite. */
export async function startPostgres(): Promise<{ target: PostgresTarget; stop: () => Promise<void> | void }> {
  // TEST_POSTGRES=pglite (or local) forces a fallback, to check the suite where no cluster can start.
  const forced = process.env.TEST_POSTGRES;
  if (forced === 'pglite') return pglite();
  const bin = forced === 'local' ? undefined : binDir();
  if (bin) {
    try {
      return await privateCluster(bin);
    } catch (error) {
      process.stderr.write(`private PostgreSQL cluster unavailable (${(error as Error).message.split('\n')[0]}); trying others\n`);
    }
  }
  if (await reachable(5432)) {
    return {
      target: { host: '127.0.0.1', port: 5432, database: 'test', username: 'postgres', password: 'unused', checksPasswords: false, kind: 'local server' },
      stop: () => undefined,
    };
  }
  return pglite();
}
