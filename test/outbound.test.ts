import { createServer, type IncomingHttpHeaders } from 'node:http';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../shared/errors';
import { addressAllowed, endpointOf, isThisMachine, outboundFetch, outboundPolicyFromConfig, outboundRequest, resolveAllowed, type OutboundPolicy } from '../shared/net/outbound';
import { config } from '../shared/config';

/**
 * The outbound guard against a real local server. "Public" cannot exist here, so `localhost` is
 * made an allowed name where a test needs a host that may be called, while 127.0.0.1 itself is not.
 */
const seen: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
const server = createServer((req, res) => {
  seen.push({ url: req.url!, headers: req.headers });
  const port = (server.address() as { port: number }).port;
  if (req.url === '/to-loopback') return res.writeHead(302, { location: `http://127.0.0.1:${port}/secret` }).end();
  if (req.url === '/to-metadata') return res.writeHead(307, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
  if (req.url === '/loop') return res.writeHead(302, { location: '/loop' }).end();
  if (req.url === '/big') return res.end('x'.repeat(100_000));
  if (req.url === '/slow') return void setTimeout(() => res.end('late'), 2000);
  if (req.url === '/hop') return res.writeHead(303, { location: `http://127.0.0.1:${port}/landed` }).end();
  if (req.url === '/hop-307') return res.writeHead(307, { location: `http://127.0.0.1:${port}/landed` }).end();
  if (req.url === '/same-origin-307') return res.writeHead(307, { location: '/landed' }).end();
  res.end(`ok ${req.method} ${req.url}`);
});
let port = 0;
const strict: OutboundPolicy = { allowedHosts: new Set(), allowPrivateNetworks: false };
const localhostOnly: OutboundPolicy = { allowedHosts: new Set(['localhost']), allowPrivateNetworks: false };
const privateOk: OutboundPolicy = { allowedHosts: new Set(), allowPrivateNetworks: true };

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('the outbound guard', () => {
  it('classifies addresses: public unicast only, unless private networks are allowed', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.9', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fd00:ec2::254', 'fe80::1', '::ffff:10.0.0.1', '224.0.0.1', 'not-an-ip']) {
      expect(addressAllowed(a, strict), a).toBe(false);
    }
    for (const a of ['8.8.8.8', '2606:4700::1111', '93.184.216.34']) expect(addressAllowed(a, strict), a).toBe(true);
    expect(addressAllowed('10.1.2.3', privateOk)).toBe(true);
    expect(addressAllowed('169.254.169.254', privateOk)).toBe(false); // metadata: never
    expect(addressAllowed('fd00:ec2::254', privateOk)).toBe(false);
    expect(addressAllowed('224.0.0.1', privateOk)).toBe(false);
  });

  it('judges an IPv6 address that carries an IPv4 one by that address, and site-local IPv6 as private', async () => {
    // mapped, compatible, NAT64, 6to4 and Teredo (client 127.8.0.1, stored inverted) forms of loopback and metadata addresses
    for (const a of ['::ffff:127.0.0.1', '::127.0.0.1', '::a9fe:a9fe', '64:ff9b::7f00:1', '64:ff9b::a9fe:a9fe', '2002:7f00:1::1', '2002:a9fe:a9fe::', '2001:0:808:808::80f7:fffe', 'fec0::1']) {
      expect(addressAllowed(a, strict), a).toBe(false);
    }
    for (const a of ['64:ff9b::808:808', '2002:808:808::1', '2001:0:808:808::f7f7:f7f7']) expect(addressAllowed(a, strict), a).toBe(true);
    expect(addressAllowed('fec0::1', privateOk)).toBe(true);
    expect(addressAllowed('::a9fe:a9fe', privateOk)).toBe(false); // the metadata service, however written
    const before = seen.length;
    for (const url of [`http://[::127.0.0.1]:${port}/`, 'http://[::a9fe:a9fe]/latest/meta-data/']) {
      expect((await refusal(outboundRequest(url, {}, strict))).details, url).toMatchObject({ reason: 'refused' });
    }
    expect(seen.length).toBe(before);
  });

  it('refuses loopback, metadata, private and IPv6 loopback addresses, and names that resolve to them, before connecting', async () => {
    const before = seen.length;
    for (const url of [`http://127.0.0.1:${port}/`, 'http://169.254.169.254/latest/meta-data/', 'http://10.0.0.1/', `http://[::1]:${port}/`, `http://localhost:${port}/`]) {
      const error = await refusal(outboundRequest(url, {}, strict));
      expect(error.details, url).toMatchObject({ reason: 'refused' });
      expect(error.message).toMatch(/not a public address/);
    }
    expect(seen.length).toBe(before); // nothing reached the server
    expect((await refusal(outboundRequest('file:///etc/passwd', {}, privateOk))).details).toMatchObject({ reason: 'protocol' });
  });

  it('never sends credentials a URL carries (user:password@), refusing before connecting', async () => {
    const before = seen.length;
    const error = await refusal(outboundRequest(`http://user:secret@localhost:${port}/plain`, {}, localhostOnly));
    expect(error.details).toMatchObject({ reason: 'protocol' });
    expect(error.message).not.toContain('secret');
    expect(seen.length).toBe(before);
  });

  it('never reaches the server’s own services, whatever the allow-list says: its DynamoDB, its S3, endpoints it names', async () => {
    const dynamo = new URL(config.dynamodbEndpoint!);
    const s3 = new URL(config.s3Endpoint!);
    // The loosest a deployment can be: localhost allowed by name, and every private network.
    const loose: OutboundPolicy = { ...outboundPolicyFromConfig([`http://localhost:${port}/`]), allowedHosts: new Set(['localhost']), allowPrivateNetworks: true };
    const before = seen.length;
    for (const url of [`http://localhost:${dynamo.port}/`, `http://127.0.0.1:${dynamo.port}/`, `http://[::ffff:127.0.0.1]:${dynamo.port}/`, `http://localhost:${s3.port}/cairn-test`, `http://localhost:${port}/named-as-own`]) {
      const error = await refusal(outboundRequest(url, {}, loose));
      expect(error.details, url).toMatchObject({ reason: 'refused' });
      expect(error.message, url).toMatch(/own services/);
    }
    expect(seen.length).toBe(before);
    expect(await resolveAllowed('localhost', Number(dynamo.port), loose).then(() => 'allowed', (e: AppError) => e.message)).toMatch(/own services/);
    // Another service on localhost stays callable where the deployment allows it.
    const allowed: OutboundPolicy = { ...outboundPolicyFromConfig(), allowedHosts: new Set(['localhost']), allowPrivateNetworks: false };
    expect((await outboundRequest(`http://localhost:${port}/plain`, {}, allowed)).status).toBe(200);
  });

  it('checks every redirect again: an allowed host redirecting to loopback or the metadata service is refused', async () => {
    expect((await outboundRequest(`http://localhost:${port}/plain`, {}, localhostOnly)).body.toString()).toBe('ok GET /plain');
    const toLoopback = await refusal(outboundRequest(`http://localhost:${port}/to-loopback`, {}, localhostOnly));
    expect(toLoopback.details).toMatchObject({ reason: 'refused', host: '127.0.0.1' });
    expect((await refusal(outboundRequest(`http://localhost:${port}/to-metadata`, {}, localhostOnly))).details).toMatchObject({ reason: 'refused', host: '169.254.169.254' });
    expect((await refusal(outboundRequest(`http://localhost:${port}/loop`, {}, localhostOnly))).details).toMatchObject({ reason: 'redirects' });
  });

  it('bounds time and size, and keeps credentials to the host they were given for', async () => {
    const big = await outboundRequest(`http://127.0.0.1:${port}/big`, { maxBytes: 1000 }, privateOk);
    expect(big.body.length).toBe(1000);
    expect(big.truncated).toBe(true);
    expect((await refusal(outboundRequest(`http://127.0.0.1:${port}/slow`, { timeoutMs: 200 }, privateOk))).details).toMatchObject({ reason: 'timeout' });
    // localhost → 127.0.0.1 is another origin: the Authorization header stays behind; a 303 turns the POST into a GET.
    seen.length = 0;
    const hopped = await outboundRequest(`http://localhost:${port}/hop`, { method: 'POST', body: '{}', headers: { authorization: 'Bearer secret', 'content-type': 'application/json' } }, privateOk);
    expect(hopped.body.toString()).toBe('ok GET /landed');
    expect(seen[0]!.headers.authorization).toBe('Bearer secret');
    expect(seen[1]!.headers.authorization).toBeUndefined();
  });

  it('carries none of a request’s own headers to another origin (a tool’s secret header among them), only those that describe it', async () => {
    seen.length = 0;
    const headers = { 'x-auth-token': 'tool-secret', 'x-tenant-header': 'configured', authorization: 'Bearer secret', accept: 'application/json', 'content-type': 'application/json' };
    const hopped = await outboundRequest(`http://localhost:${port}/hop-307`, { method: 'POST', body: '{"a":1}', headers }, privateOk);
    expect(hopped.body.toString()).toBe('ok POST /landed');
    expect(seen[0]!.headers['x-auth-token']).toBe('tool-secret');
    expect(seen[1]!.headers).not.toHaveProperty('x-auth-token');
    expect(seen[1]!.headers).not.toHaveProperty('x-tenant-header');
    expect(seen[1]!.headers).not.toHaveProperty('authorization');
    expect(seen[1]!.headers).toMatchObject({ accept: 'application/json', 'content-type': 'application/json' });
    // The same origin keeps them.
    seen.length = 0;
    await outboundRequest(`http://localhost:${port}/same-origin-307`, { method: 'POST', body: '{}', headers }, privateOk);
    expect(seen[1]!.headers['x-auth-token']).toBe('tool-secret');
  });

  it('follows no redirect for a request whose body carries credentials (maxRedirects: 0), sending it nowhere else', async () => {
    seen.length = 0;
    const refused = await refusal(outboundRequest(`http://localhost:${port}/hop-307`, { method: 'POST', body: 'refresh_token=r&client_secret=s', maxRedirects: 0 }, privateOk));
    expect(refused.details).toMatchObject({ reason: 'redirects' });
    expect(refused.message).toMatch(/does not follow/);
    expect(seen.map((s) => s.url)).toEqual(['/hop-307']);
  });

  it('gives clients that bring their own HTTP (the MCP SDK) a fetch behind the same guard, streaming and bounded', async () => {
    const guarded = outboundFetch(localhostOnly, { maxBytes: 50_000 });
    const ok = await guarded(`http://localhost:${port}/plain`, { method: 'POST', body: 'x', headers: new Headers({ 'x-one': '1' }) });
    expect([ok.status, await ok.text()]).toEqual([200, 'ok POST /plain']);
    expect(seen.at(-1)!.headers['x-one']).toBe('1');
    // Refused before connecting, and on a redirect, as outboundRequest is.
    const before = seen.length;
    expect((await refusal(guarded(`http://127.0.0.1:${port}/plain`))).details).toMatchObject({ reason: 'refused' });
    expect((await refusal(guarded(`http://localhost:${port}/to-metadata`))).details).toMatchObject({ reason: 'refused', host: '169.254.169.254' });
    expect(seen.length).toBe(before + 1); // only the redirecting request reached the server
    // A body past the bound errors the stream instead of filling memory.
    const big = await guarded(`http://localhost:${port}/big`);
    await expect(big.text()).rejects.toThrow();
  });

  it('reads an own service given as host:port (localhost:3000) as that host and port, not as a URL scheme', () => {
    expect(endpointOf('localhost:3000')).toEqual({ host: 'localhost', port: 3000 });
    expect(endpointOf('127.0.0.1:9001')).toEqual({ host: '127.0.0.1', port: 9001 });
    expect(endpointOf('http://[::1]:8000/')).toEqual({ host: '::1', port: 8000 });
    expect(endpointOf('https://dynamodb.internal')).toEqual({ host: 'dynamodb.internal', port: 443 });
  });

  it('refuses the server’s own port given as localhost:<port>, on loopback by every spelling, with localhost allowed', async () => {
    const ownPort: OutboundPolicy = { allowedHosts: new Set(['localhost', '127.0.0.1', '::1', '0.0.0.0']), allowPrivateNetworks: true, ownServices: [endpointOf(`localhost:${port}`)!] };
    const before = seen.length;
    for (const url of [`http://localhost:${port}/`, `http://127.0.0.1:${port}/`, `http://127.0.0.2:${port}/`, `http://[::1]:${port}/`, `http://0.0.0.0:${port}/`, `http://[::ffff:127.0.0.1]:${port}/`]) {
      const error = await refusal(outboundRequest(url, {}, ownPort));
      expect(error.message, url).toMatch(/own services/);
    }
    expect(await resolveAllowed('localhost', port, ownPort).then(() => 'allowed', (e: AppError) => e.message)).toMatch(/own services/);
    expect(seen.length).toBe(before);
  });

  it('counts every address of this machine’s interfaces as this machine, and refuses an own service on each of them', async () => {
    const mine = Object.values(networkInterfaces()).flatMap((list) => list ?? []).map((i) => i.address);
    expect(mine.length).toBeGreaterThan(0);
    for (const address of [...mine, '127.0.0.1', '127.1.2.3', '::1', '0.0.0.0', '::', '::ffff:127.0.0.1']) expect(isThisMachine(address), address).toBe(true);
    for (const address of ['8.8.8.8', '10.255.255.254', 'fd12:3456::1', 'not-an-ip']) expect(isThisMachine(address), address).toBe(false);
    // Whatever the operator allows, an own service is refused on every one of them (connect is never tried).
    const loose: OutboundPolicy = { allowedHosts: new Set(mine.map((a) => a.split('%')[0]!)), allowPrivateNetworks: true, ownServices: [endpointOf('http://127.0.0.1:8000')!] };
    for (const address of mine) {
      expect(await resolveAllowed(address, 8000, loose).then(() => 'allowed', (e: AppError) => e.message), address).toMatch(/own services/);
      expect(await resolveAllowed(address, 8001, loose), address).toBeTruthy();
    }
  });

  it('names the setting that would allow a refused host, and says when none would', async () => {
    const private10 = await refusal(outboundRequest('http://10.0.0.1:5432/', {}, strict));
    expect(private10.message).toContain('TOOL_ALLOWED_HOSTS=10.0.0.1:5432');
    expect(private10.message).toContain('TOOL_ALLOW_PRIVATE_NETWORKS=true');
    expect(await resolveAllowed('::1', 5432, strict).then(() => '', (e: AppError) => e.message)).toContain('TOOL_ALLOWED_HOSTS=[::1]:5432');
    const metadata = await refusal(outboundRequest('http://169.254.169.254/', {}, privateOk));
    expect(metadata.message).toMatch(/never called, whatever TOOL_ALLOWED_HOSTS or TOOL_ALLOW_PRIVATE_NETWORKS allow/);
    // The bracketed host:port a refusal names is one the operator can write.
    const v6: OutboundPolicy = { allowedHosts: new Set(['[::1]:' + port]), allowPrivateNetworks: false };
    expect(await resolveAllowed('::1', port, v6)).toBe('::1');
  });
});
