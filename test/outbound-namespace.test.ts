import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from './helpers/processes';

/**
 * The review's probe, kept: `npm start` in a network namespace of its own, where "this machine" has
 * a LAN address (IPv4 and IPv6) besides loopback and a name that resolves to it, and the operator
 * allows everything there is to allow. A workflow `http` step must not reach the server's own API,
 * DynamoDB Local or S3 on any address of the machine, and DynamoDB Local and S3 must not listen
 * beyond loopback at all. A service of the operator's on the same machine stays reachable, so the
 * refusals are the guard's, not a network that reaches nothing.
 *
 * It needs root and iproute2 (`ip netns`), as CI has; elsewhere it says why it did not run.
 */
const id = `${process.pid % 100_000}`;
const namespace = `cairn-guard-${id}`;
const octet = (process.pid % 200) + 20;
const outside = `10.231.${octet}.1`;
const lanV4 = `10.231.${octet}.2`;
const lanV6 = `fd42:231:${octet.toString(16)}::2`;
const lanName = 'cairn-host.test';
const key = `cak_${randomBytes(18).toString('base64url')}`;

function namespacesWork(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root';
  try {
    execFileSync('ip', ['netns', 'list'], { stdio: 'ignore' });
  } catch {
    return 'needs iproute2 (ip netns)';
  }
  return undefined;
}
const unavailable = namespacesWork();
if (unavailable && process.env.CI) throw new Error(`the outbound guard's namespace test ${unavailable}: CI must run it`);

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'pipe' });
const inside = (command: string, args: string[], env: Record<string, string>): ChildProcess =>
  spawn('ip', ['netns', 'exec', namespace, command, ...args], { cwd: new URL('..', import.meta.url).pathname, env, stdio: ['ignore', 'pipe', 'pipe'] });

let server: ChildProcess | undefined;
let operatorService: ChildProcess | undefined;
let output = '';
const ports = { api: 0, dynamo: 0, s3: 0, operator: 0 };

beforeAll(async () => {
  if (unavailable) return;
  ip('netns', 'add', namespace);
  ip('link', 'add', `cg${id}o`, 'type', 'veth', 'peer', 'name', `cg${id}i`);
  ip('link', 'set', `cg${id}i`, 'netns', namespace);
  ip('addr', 'add', `${outside}/24`, 'dev', `cg${id}o`);
  ip('link', 'set', `cg${id}o`, 'up');
  ip('netns', 'exec', namespace, 'ip', 'link', 'set', 'lo', 'up');
  ip('netns', 'exec', namespace, 'ip', 'addr', 'add', `${lanV4}/24`, 'dev', `cg${id}i`);
  ip('netns', 'exec', namespace, 'ip', '-6', 'addr', 'add', `${lanV6}/64`, 'dev', `cg${id}i`, 'nodad');
  ip('netns', 'exec', namespace, 'ip', 'link', 'set', `cg${id}i`, 'up');
  // `ip netns exec` puts /etc/netns/<name>/hosts in place of /etc/hosts: the machine's name.
  mkdirSync(`/etc/netns/${namespace}`, { recursive: true });
  writeFileSync(`/etc/netns/${namespace}/hosts`, `127.0.0.1 localhost\n::1 localhost\n${lanV4} ${lanName}\n${lanV6} ${lanName}\n`);

  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', NODE_NO_WARNINGS: '1', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
  operatorService = inside(process.execPath, ['-e', `const s = require('http').createServer((q, r) => r.end('operator service')).listen(0, '::', () => console.log('port ' + s.address().port))`], env);
  let operatorOut = '';
  operatorService.stdout!.on('data', (d: Buffer) => (operatorOut += d.toString()));
  server = inside(process.execPath, ['--import', 'tsx', 'local/server.ts'], {
    ...env,
    PORT: '0',
    DATA_DIR: ':memory:',
    DEV_API_KEY: key,
    DEV_API_KEY_PLAN: 'unlimited',
    LOG_LEVEL: 'warn',
    // Everything an operator can allow: every private network, and this machine by every name and address.
    TOOL_ALLOW_PRIVATE_NETWORKS: 'true',
    TOOL_ALLOWED_HOSTS: ['localhost', lanName, lanV4, lanV6, '127.0.0.1', '::1', '0.0.0.0'].join(','),
  });
  server.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  server.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  await waitFor(() => /DEV_API_KEY=/.test(output) || server!.exitCode !== null, 'the server banner', 60_000);
  await waitFor(() => /port \d+/.test(operatorOut), 'the operator service');
  const port = (pattern: RegExp) => Number(pattern.exec(output)?.[1] ?? NaN);
  ports.api = port(/Cairn is running at http:\/\/localhost:(\d+)/);
  ports.dynamo = port(/DynamoDB\s+http:\/\/127\.0\.0\.1:(\d+)/);
  ports.s3 = port(/S3 \(files\)\s+http:\/\/127\.0\.0\.1:(\d+)/);
  ports.operator = Number(/port (\d+)/.exec(operatorOut)![1]);
  if (!Object.values(ports).every((p) => p > 0)) throw new Error(`the server did not start:\n${output}`);
}, 90_000);

afterAll(async () => {
  if (unavailable) return;
  for (const child of [server, operatorService]) {
    if (!child || child.exitCode !== null) continue;
    child.kill('SIGTERM');
    await new Promise((done) => child.once('exit', done));
  }
  try {
    ip('netns', 'del', namespace);
    ip('link', 'del', `cg${id}o`);
  } catch {
    // Deleting the namespace takes its end of the pair and so the pair.
  }
  rmSync(`/etc/netns/${namespace}`, { recursive: true, force: true });
});

interface Step {
  id: string;
  status: string;
  output?: unknown;
  error?: { message: string };
}

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`http://${lanV4}:${ports.api}${path}`, { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as { data?: { id: string; steps?: Step[] }; error?: { message: string } } };
};

/** What a workflow `http` step answers for a URL: the body it got, or its error message. */
async function stepReaches(url: string, headers: Record<string, string> = {}): Promise<{ ok: boolean; message: string }> {
  const workflow = await api('POST', '/v1/workflows', { name: 'probe', steps: [{ id: 'call', type: 'http', method: 'POST', url, headers, body: {}, retry: { maxAttempts: 1 } }] });
  expect(workflow.status, JSON.stringify(workflow.body)).toBe(201);
  const execution = await api('POST', `/v1/workflows/${workflow.body.data!.id}/execute`, {});
  const step = execution.body.data!.steps!.find((s) => s.id === 'call')!;
  return step.status === 'succeeded' ? { ok: true, message: JSON.stringify(step.output) } : { ok: false, message: step.error?.message ?? step.status };
}

/** Whether a TCP connection from outside the namespace (another machine on the LAN) is accepted. */
const listensFor = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host, port, timeout: 3000 });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });

describe.skipIf(unavailable)(`the outbound guard on a machine with a LAN address (${unavailable ?? 'network namespace'})`, () => {
  it('starts DynamoDB Local and S3 on loopback only: from the LAN only the API answers', async () => {
    expect(await listensFor(lanV4, ports.api)).toBe(true);
    expect(await listensFor(lanV4, ports.dynamo)).toBe(false);
    expect(await listensFor(lanV4, ports.s3)).toBe(false);
  });

  it('reaches a service of the operator’s on this machine where the operator allowed it (the probe can see a reach)', async () => {
    for (const host of [lanV4, `[${lanV6}]`, lanName, 'localhost']) {
      const reach = await stepReaches(`http://${host}:${ports.operator}/`);
      expect(reach, host).toEqual({ ok: true, message: expect.stringContaining('operator service') });
    }
  });

  it('never reaches the API, DynamoDB Local or S3 on any address or name of this machine, whatever is allowed', async () => {
    const hosts = ['127.0.0.1', '127.0.0.2', '[::1]', '0.0.0.0', '[::]', '[::ffff:127.0.0.1]', 'localhost', lanV4, `[${lanV6}]`, `[::ffff:${lanV4}]`, lanName];
    const reached: string[] = [];
    for (const [service, port] of [['api', ports.api], ['dynamo', ports.dynamo], ['s3', ports.s3]] as const) {
      for (const host of hosts) {
        const url = `http://${host}:${port}/`;
        const reach = await stepReaches(url, service === 'dynamo' ? { 'x-amz-target': 'DynamoDB_20120810.Scan' } : {});
        if (reach.ok || !/own services/.test(reach.message)) reached.push(`${service} ${url}: ${reach.message}`);
      }
    }
    expect(reached).toEqual([]);
  });

  it('refuses a completion webhook to the API’s own port on the LAN address when it is written', async () => {
    const workflow = await api('POST', '/v1/workflows', { name: 'hooked', webhook: { url: `http://${lanName}:${ports.api}/v1/agents`, secret: 'whsec_0123456789abcdef' }, steps: [{ id: 'a', type: 'transform', expression: '1' }] });
    expect(workflow.status).toBe(400);
    expect(workflow.body.error!.message).toMatch(/own services/);
  });
});
