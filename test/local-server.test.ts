import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runScript, waitFor, type Started } from './helpers/processes';

const dataDir = mkdtempSync(join(tmpdir(), 'cairn-local-'));
// The server picks a free port; each start's banner says which.
let base = '';
const running: Started[] = [];

async function startServer(): Promise<{ server: Started; key: string }> {
  const server = runScript('local/server.ts', [], { PORT: '0', DATA_DIR: dataDir, API_KEY_CACHE_SECONDS: '0' });
  running.push(server);
  await waitFor(() => /DEV_API_KEY=\S+/.test(server.output()) || server.child.exitCode !== null, 'the server banner');
  const key = /DEV_API_KEY=(\S+)/.exec(server.output())?.[1];
  if (!key) throw new Error(`server did not start:\n${server.output()}`);
  const port = /Cairn is running at http:\/\/localhost:(\d+)/.exec(server.output())![1];
  base = `http://127.0.0.1:${port}`;
  return { server, key };
}

async function stop(server: Started) {
  server.child.kill('SIGTERM');
  return server.exited;
}

afterAll(async () => {
  for (const s of running) if (s.child.exitCode === null) s.child.kill('SIGKILL');
});

describe('npm start (local mode)', () => {
  let agentId = '';
  let firstKey = '';

  it('starts DynamoDB Local, prints a working key and serves /healthz and /v1/docs', async () => {
    const { server, key } = await startServer();
    firstKey = key;
    expect(server.output()).toContain(`${base.replace('127.0.0.1', 'localhost')}/v1/docs`);
    expect(server.output()).toMatch(/PLATFORM_ADMIN_TOKEN=\S+/);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const docs = await fetch(`${base}/v1/docs`);
    expect(docs.status).toBe(200);
    const html = await docs.text();
    expect(html).not.toMatch(/https?:\/\//); // no CDN: everything is served locally
    expect((await fetch(`${base}/v1/docs/swagger-ui-bundle.js`)).status).toBe(200);
    const created = await fetch(`${base}/v1/agents`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Support bot', model: 'gpt-4', capabilities: ['chat', 'document-search'] }),
    });
    expect(created.status).toBe(201);
    agentId = ((await created.json()) as { data: { id: string } }).data.id;
    expect(existsSync(join(dataDir, 'server.json'))).toBe(true);
  });

  it('issues and revokes keys with the keys command while the server runs', async () => {
    const create = runScript('local/keys-cli.ts', ['create', '--tenant', 'acme', '--plan', 'pro'], { DATA_DIR: dataDir });
    expect(await create.exited).toBe(0);
    const key = /^(cak_\S+)$/m.exec(create.output())?.[1];
    const keyId = /Created (key_\S+)/.exec(create.output())?.[1];
    expect(key).toBeTruthy();
    const ok = await fetch(`${base}/v1/agents`, { headers: { 'x-api-key': key! } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(((await ok.json()) as { data: unknown[] }).data).toEqual([]); // tenant acme sees none of ten_local's agents

    const revoke = runScript('local/keys-cli.ts', ['revoke', '--tenant', 'acme', '--key', keyId!], { DATA_DIR: dataDir });
    expect(await revoke.exited).toBe(0);
    expect((await fetch(`${base}/v1/agents`, { headers: { 'x-api-key': key! } })).status).toBe(401);

    const bad = runScript('local/keys-cli.ts', ['create', '--tenant', 'Bad Tenant!'], { DATA_DIR: dataDir });
    expect(await bad.exited).toBe(2);
  });

  it('shuts down cleanly on SIGTERM, DynamoDB Local included, and keeps data and key across restarts', async () => {
    const first = running[0]!;
    const endpoint = /DynamoDB\s+(http:\/\/\S+)/.exec(first.output())![1]!;
    expect(await stop(first)).toBe(0);
    await expect(fetch(endpoint, { method: 'POST' })).rejects.toThrow();
    expect(existsSync(join(dataDir, 'server.json'))).toBe(false);

    const { server, key } = await startServer();
    expect(key).toBe(firstKey);
    const got = await fetch(`${base}/v1/agents/${agentId}`, { headers: { 'x-api-key': key } });
    expect(got.status).toBe(200);
    server.child.kill('SIGINT');
    expect(await server.exited).toBe(0);
  });

  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const runRecord = () => JSON.parse(readFileSync(join(dataDir, 'server.json'), 'utf8')) as { pid: number; dynamoPid: number };

  it('leaves no DynamoDB Local behind when the server is killed with SIGKILL, and restarts at once on the same data', async () => {
    const { server } = await startServer();
    const { dynamoPid } = runRecord();
    expect(alive(dynamoPid)).toBe(true);
    server.child.kill('SIGKILL');
    // Restarted right away: the old server may still be exiting; the new one waits, then owns the data alone.
    const { server: again, key } = await startServer();
    await waitFor(() => !alive(dynamoPid), 'the killed server’s DynamoDB Local to end', 15_000);
    expect(runRecord().dynamoPid).not.toBe(dynamoPid);
    expect((await fetch(`${base}/v1/agents/${agentId}`, { headers: { 'x-api-key': key } })).status).toBe(200);
    again.child.kill('SIGKILL');
    await again.exited;
    const orphan = runRecord().dynamoPid;
    // With nobody restarting, the watchdog ends it by itself.
    await waitFor(() => !alive(orphan), 'the watchdog to end the orphaned DynamoDB Local', 15_000);
    // Two server starts and up to two 15-second waits: more than the default 30 s on a loaded machine.
  }, 90_000);
});
