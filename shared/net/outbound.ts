import { lookup as dnsLookup, promises as dnsPromises, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { networkInterfaces } from 'node:os';
import type { IncomingMessage } from 'node:http';
import { Readable, Transform } from 'node:stream';
import ipaddr from 'ipaddr.js';
import { config } from '../config';
import { UpstreamError } from '../errors';

/**
 * The one way Cairn calls a URL a tenant gave it (tools, and later workflow steps, crawlers,
 * webhooks): only http(s); every address the name resolves to must be public unicast — loopback,
 * private, link-local (the cloud metadata service at 169.254.169.254 included), unique-local,
 * carrier-grade NAT, multicast and reserved ranges are refused — and it is checked when the
 * socket connects (the resolver's answer is the address used, so a name cannot rebind between
 * check and use), again on every redirect; time and response size are bounded.
 */
export interface OutboundPolicy {
  /** Host names or addresses (or `host:port`) allowed whatever they resolve to (TOOL_ALLOWED_HOSTS). */
  allowedHosts: ReadonlySet<string>;
  /** Private, loopback and link-local addresses allowed (TOOL_ALLOW_PRIVATE_NETWORKS: tests, local demos). */
  allowPrivateNetworks: boolean;
  /**
   * The server's own services (its DynamoDB and S3 endpoints, its own port, Lambda's runtime API):
   * refused whatever the allow-list says, so allowing `localhost` for a demo tool does not open the
   * store holding every tenant's data.
   */
  ownServices?: ReadonlyArray<{ host: string; port: number }>;
}

/**
 * `host:port` of a URL or of a `host:port` pair, for the own-services list. Only `scheme://…` is
 * read as a URL: `localhost:3000` is a host and a port, not the scheme `localhost:`.
 */
export function endpointOf(value: string): { host: string; port: number } | undefined {
  const text = value.includes('://') ? value : `http://${value}`;
  if (!URL.canParse(text)) return undefined;
  const url = new URL(text);
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  return { host: url.hostname.replace(/^\[|\]$/g, '').toLowerCase(), port };
}

/** The deployment's policy; `ownServices`: endpoints of the server's own that config does not name (local mode's). */
export const outboundPolicyFromConfig = (ownServices: string[] = []): OutboundPolicy => ({
  allowedHosts: new Set(config.toolAllowedHosts),
  allowPrivateNetworks: config.toolAllowPrivateNetworks,
  ownServices: [config.dynamodbEndpoint, config.s3Endpoint, config.lambdaRuntimeApi, config.port > 0 ? `localhost:${config.port}` : undefined, ...ownServices]
    .filter((e): e is string => Boolean(e))
    .map(endpointOf)
    .filter((e) => e !== undefined),
});

const THIS_MACHINE_NAMES = new Set(['localhost', 'localhost.', 'ip6-localhost', 'ip6-loopback']);

/** An address without its IPv6 zone (`fe80::1%eth0`), IPv4-mapped IPv6 as IPv4, in one spelling. */
const plainAddress = (address: string) => ipaddr.process(address.split('%')[0]!).toNormalizedString();

/**
 * Whether an address reaches this machine: loopback and unspecified (0.0.0.0, ::) addresses, any
 * address of any of its interfaces (IPv4 and IPv6, read at each check, so an interface that comes
 * up later counts), and an IPv6 address carrying one of those. A service listening on every
 * interface answers on all of them, so an own service is refused on all of them.
 */
export function isThisMachine(address: string): boolean {
  const bare = address.split('%')[0]!;
  if (!ipaddr.isValid(bare)) return false;
  const parsed = ipaddr.process(bare);
  if (['loopback', 'unspecified'].includes(parsed.range())) return true;
  if (parsed.kind() === 'ipv6' && embeddedIPv4(parsed as ipaddr.IPv6).some((v4) => isThisMachine(v4.toString()))) return true;
  const plain = parsed.toNormalizedString();
  return Object.values(networkInterfaces()).some((list) => list?.some((i) => ipaddr.isValid(i.address.split('%')[0]!) && plainAddress(i.address) === plain));
}

/**
 * Whether an address and port are one of the server's own services. One on this machine (named
 * localhost, or at one of its addresses) is every address of this machine on its port; one at
 * another machine's address is that address; one named otherwise (a container's name) is every
 * address of this machine and every address that is not public, on its port: wider than the
 * service, never narrower.
 */
function isOwnService(address: string, port: number, policy: OutboundPolicy): boolean {
  return (policy.ownServices ?? []).some((s) => {
    if (s.port !== port) return false;
    if (THIS_MACHINE_NAMES.has(s.host) || isThisMachine(s.host)) return isThisMachine(address);
    if (ipaddr.isValid(s.host)) return plainAddress(s.host) === plainAddress(address);
    return isThisMachine(address) || !addressAllowed(address, { allowedHosts: new Set(), allowPrivateNetworks: false });
  });
}

/** `host:port` as TOOL_ALLOWED_HOSTS spells it (an IPv6 address in brackets). */
const hostPort = (host: string, port: number) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);

/** Whether the operator allowed this host by name, on any port or on this one. */
export const allowedByName = (host: string, port: number, policy: OutboundPolicy) =>
  policy.allowedHosts.has(host) || policy.allowedHosts.has(hostPort(host, port)) || policy.allowedHosts.has(`${host}:${port}`);

/**
 * Why `host`, resolved to `address`, may not be called on `port`; undefined when it may. A refusal
 * names the setting that would allow it, or says that none does.
 */
function refusalOf(host: string, address: string, port: number, policy: OutboundPolicy): string | undefined {
  const what = address === host ? host : `${host} resolves to ${address}, which`;
  const never = neverCalled(address, port, policy);
  if (never) return `${what} is not a public address (${never}: never called, whatever TOOL_ALLOWED_HOSTS or TOOL_ALLOW_PRIVATE_NETWORKS allow)`;
  if (allowedByName(host, port, policy) || addressAllowed(address, policy)) return undefined;
  const privateRange = addressAllowed(address, { ...policy, allowPrivateNetworks: true });
  return `${what} is not a public address (an operator may allow it with TOOL_ALLOWED_HOSTS=${hostPort(host, port)}${privateRange ? ' or TOOL_ALLOW_PRIVATE_NETWORKS=true' : ''})`;
}

/** Why the address and port may not be called at all, allowed name or not; undefined when they may. */
function neverCalled(address: string, port: number, policy: OutboundPolicy): string | undefined {
  const bare = address.split('%')[0]!;
  if (!ipaddr.isValid(bare)) return undefined;
  const plain = ipaddr.process(bare).toString();
  if (METADATA.has(plain) || METADATA.has(ipaddr.parse(bare).toNormalizedString())) return 'the cloud metadata service';
  if (isOwnService(address, port, policy)) return 'one of this server’s own services';
  return undefined;
}

export interface OutboundRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Whole exchange, redirects included (default 10 s). */
  timeoutMs?: number;
  /** Bytes of response body kept; the rest is dropped and `truncated` set (default 1 MiB). */
  maxBytes?: number;
  /** Redirects followed (default 5); 0 for a request whose body carries credentials: a redirect fails it. */
  maxRedirects?: number;
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  truncated: boolean;
  /** The URL that answered (after redirects). */
  url: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

type Refusal = 'refused' | 'timeout' | 'network' | 'redirects' | 'protocol';

function outboundError(reason: Refusal, message: string, host: string, cause?: unknown) {
  return new UpstreamError(message, { reason, host }, { retryable: reason === 'timeout' || reason === 'network', cause });
}

/** The cloud metadata services (AWS's IPv4 and IPv6 addresses): refused even where private networks are allowed. */
const METADATA = new Set(['169.254.169.254', 'fd00:ec2::254', '169.254.170.2']);

/**
 * The IPv4 addresses an IPv6 address carries, by which it is judged: mapped (::ffff:a.b.c.d),
 * compatible (::a.b.c.d), NAT64 (64:ff9b::/96, 64:ff9b:1::/48), 6to4 (2002::/16) and Teredo
 * (2001::/32: its server, and its client, stored inverted).
 */
function embeddedIPv4(v6: ipaddr.IPv6): ipaddr.IPv4[] {
  const p = v6.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  if (v6.isIPv4MappedAddress()) return [v6.toIPv4Address()];
  if (p.slice(0, 6).every((x) => x === 0)) return [v4(p[6]!, p[7]!)];
  if (p[0] === 0x64 && p[1] === 0xff9b && (p.slice(2, 6).every((x) => x === 0) || p[2] === 1)) return [v4(p[6]!, p[7]!)];
  if (p[0] === 0x2002) return [v4(p[1]!, p[2]!)];
  if (p[0] === 0x2001 && p[1] === 0) return [v4(p[2]!, p[3]!), v4(~p[6]! & 0xffff, ~p[7]! & 0xffff)];
  return [];
}

/** Whether an address may be called: public unicast only, unless private networks are allowed. */
export function addressAllowed(address: string, policy: OutboundPolicy): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if (METADATA.has(parsed.toNormalizedString()) || METADATA.has(parsed.toString())) return false;
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    const carried = embeddedIPv4(v6);
    if (carried.length > 0) return carried.every((v4) => addressAllowed(v4.toString(), policy));
    // Site-local (fec0::/10, deprecated) is a private range like any other.
    if ((v6.parts[0]! & 0xffc0) === 0xfec0) return policy.allowPrivateNetworks;
  }
  const range = parsed.range();
  if (range === 'unicast') return true;
  return policy.allowPrivateNetworks && ['private', 'loopback', 'linkLocal', 'uniqueLocal', 'carrierGradeNat'].includes(range);
}

/**
 * The address to open a connection to for a tenant-given host when the connection is not an HTTP
 * request (a database's): refused, as `outboundRequest` refuses, unless the policy allows every
 * address the name resolves to. The caller connects to the address returned, not to the name, so
 * the name cannot resolve elsewhere between this check and the connection.
 */
export async function resolveAllowed(host: string, port: number, policy: OutboundPolicy): Promise<string> {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  let addresses: string[];
  if (ipaddr.isValid(bare)) addresses = [ipaddr.parse(bare).toString()];
  else {
    try {
      // IPv4 first: a name such as localhost gives both, and servers often listen on IPv4 only.
      addresses = (await dnsPromises.lookup(bare, { all: true, verbatim: false })).map((a) => a.address);
    } catch (error) {
      throw outboundError('network', `${host} could not be resolved`, host, error);
    }
  }
  for (const address of addresses) {
    const refusal = refusalOf(bare, address, port, policy);
    if (refusal) throw outboundError('refused', refusal, host);
  }
  return addresses[0]!;
}

/**
 * Why calling a tenant-given URL would be refused, for where it is written (a 400 then, not a
 * failure at the first call; every call is checked again): undefined when it would not be, or when
 * its name does not resolve (yet).
 */
export async function urlRefusal(target: string, policy: OutboundPolicy): Promise<string | undefined> {
  if (!URL.canParse(target)) return 'is not a URL';
  const url = new URL(target);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (url.username || url.password) return CREDENTIALS_REFUSED;
  const refusal = await hostRefusal(url.hostname, Number(url.port) || (url.protocol === 'https:' ? 443 : 80), policy);
  return refusal && `refers to ${refusal}`;
}

/** Why connecting to a tenant-given host and port would be refused (a database's, when it is written); undefined as for `urlRefusal`. */
export async function hostRefusal(host: string, port: number, policy: OutboundPolicy): Promise<string | undefined> {
  try {
    await resolveAllowed(host, port, policy);
  } catch (error) {
    if ((error as { details?: { reason?: string } }).details?.reason === 'refused') return (error as Error).message;
  }
  return undefined;
}

const CREDENTIALS_REFUSED = 'must not carry a user name or password (user:password@): use the auth settings';

/** A resolver for the socket that fails when the name resolves to an address the policy refuses. */
function guardedLookup(policy: OutboundPolicy, port: number): typeof dnsLookup {
  return ((hostname: string, options: { all?: boolean }, callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      for (const a of addresses) {
        const reason = refusalOf(hostname.toLowerCase(), a.address, port, policy);
        if (reason) return callback(Object.assign(new Error(reason), { code: 'EREFUSED_ADDRESS' }), []);
      }
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  }) as typeof dnsLookup;
}

const agents = new WeakMap<OutboundPolicy, { http: http.Agent; https: https.Agent }>();

/**
 * Connection pools of one policy. A kept-alive socket is reused without a lookup, so a pool shared
 * across policies would carry a connection one policy allowed to a call another refuses.
 */
function agentsOf(policy: OutboundPolicy) {
  let pair = agents.get(policy);
  if (!pair) agents.set(policy, (pair = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) }));
  return pair;
}

/** Opens one exchange; the response streams (the caller reads or drains it). */
function once(url: URL, request: OutboundRequest, policy: OutboundPolicy, signal: AbortSignal): Promise<IncomingMessage> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  if (ipaddr.isValid(host)) {
    const refusal = refusalOf(host, host, port, policy);
    if (refusal) return Promise.reject(outboundError('refused', refusal, host));
  }
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    // Allowed names are resolved through the guard too: the metadata service and the server's own services stay out of reach.
    const req = client.request(url, { method: request.method ?? 'GET', headers: request.headers, signal, agent: agentsOf(policy)[url.protocol === 'https:' ? 'https' : 'http'], lookup: guardedLookup(policy, port) }, resolve);
    req.on('error', (error: Error & { code?: string }) => {
      if (signal.aborted) reject(outboundError('timeout', `${url.host} did not answer in time`, host, error));
      else if (error.code === 'EREFUSED_ADDRESS') reject(outboundError('refused', error.message, host, error));
      else reject(outboundError('network', `${url.host} could not be reached (${error.code ?? error.message})`, host, error));
    });
    req.end(request.body);
  });
}

const headersOf = (res: IncomingMessage) => Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));

/** Follows redirects (each hop guarded again) to the response that is not one; it streams. */
async function follow(target: string, request: OutboundRequest, policy: OutboundPolicy, signal: AbortSignal): Promise<{ res: IncomingMessage; url: URL }> {
  let url: URL;
  try {
    url = new URL(target);
  } catch (error) {
    throw outboundError('protocol', `${target} is not a URL`, '', error);
  }
  let current = { ...request };
  for (let hop = 0; ; hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw outboundError('protocol', `Only http and https URLs can be called, not ${url.protocol}`, url.hostname);
    // Credentials in a URL would go out as Basic auth (and a redirect could add some): never sent.
    if (url.username || url.password) throw outboundError('protocol', `A URL ${CREDENTIALS_REFUSED}`, url.hostname);
    const res = await once(url, current, policy, signal);
    const location = res.headers.location;
    if (!REDIRECTS.has(res.statusCode ?? 0) || !location) return { res, url };
    res.resume(); // a redirect's own body is not read
    const status = res.statusCode ?? 0;
    const limit = request.maxRedirects ?? 5;
    if (limit === 0) throw outboundError('redirects', `${url.host} answered with a redirect (${status}), which this request does not follow: it carries credentials`, url.hostname);
    if (hop >= limit) throw outboundError('redirects', `${url.host} redirected more than ${limit} times`, url.hostname);
    const next = new URL(location, url);
    const asGet = status === 303 || ((status === 301 || status === 302) && current.method !== undefined && current.method !== 'GET' && current.method !== 'HEAD');
    current = { ...current, headers: redirectedHeaders(current.headers ?? {}, next.origin !== url.origin, asGet), ...(asGet ? { method: 'GET', body: undefined } : {}) };
    url = next;
  }
}

/**
 * Headers that describe the request rather than whom it is from: the only ones carried to another
 * origin. Whatever else a request has — its auth, a tool's sealed headers, cookies, any header a
 * tenant configured — is for the origin it was given for.
 */
const ACROSS_ORIGINS = new Set(['accept', 'accept-encoding', 'accept-language', 'content-type', 'content-language', 'content-length', 'user-agent', 'cache-control', 'pragma', 'a2a-version', 'mcp-protocol-version']);
const BODY_HEADERS = new Set(['content-type', 'content-language', 'content-length', 'content-encoding']);

/** A request's headers on the way to where it was redirected: only the descriptive ones to another origin; none of its body's once it goes as a GET. */
function redirectedHeaders(headers: Record<string, string>, crossOrigin: boolean, asGet: boolean): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => (!crossOrigin || ACROSS_ORIGINS.has(name.toLowerCase())) && !(asGet && BODY_HEADERS.has(name.toLowerCase()))));
}

function deadlineOf(request: OutboundRequest): AbortSignal {
  const deadline = AbortSignal.timeout(request.timeoutMs ?? 10_000);
  return request.signal ? AbortSignal.any([deadline, request.signal]) : deadline;
}

/** Calls a tenant-given URL under the policy (by default the deployment's); the body is read whole, up to `maxBytes`. */
export async function outboundRequest(target: string, request: OutboundRequest, policy: OutboundPolicy): Promise<OutboundResponse> {
  const signal = deadlineOf(request);
  const maxBytes = request.maxBytes ?? 1024 * 1024;
  const { res, url } = await follow(target, request, policy, signal);
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of res as AsyncIterable<Buffer>) {
      if (size + chunk.length > maxBytes) {
        chunks.push(chunk.subarray(0, maxBytes - size));
        truncated = true;
        res.destroy();
        break;
      }
      chunks.push(chunk);
      size += chunk.length;
    }
  } catch (error) {
    throw signal.aborted ? outboundError('timeout', `${url.host} did not answer in time`, url.hostname, error) : outboundError('network', `${url.host} broke off its answer`, url.hostname, error);
  }
  return { status: res.statusCode ?? 0, headers: headersOf(res), body: Buffer.concat(chunks), truncated, url: url.toString() };
}

/**
 * A `fetch` whose every request goes through the guard, for clients that bring their own HTTP
 * (the MCP SDK): the response streams, and is cut off with an error past `maxBytes`.
 */
export function outboundFetch(policy: OutboundPolicy, limits: { timeoutMs?: number; maxBytes?: number } = {}) {
  return async (input: string | URL, init: RequestInit = {}): Promise<Response> => {
    const body = init.body === undefined || init.body === null ? undefined : typeof init.body === 'string' ? init.body : Buffer.from(await new Response(init.body).arrayBuffer()).toString('utf8');
    const request: OutboundRequest = {
      method: init.method ?? 'GET',
      headers: Object.fromEntries(new Headers(init.headers).entries()),
      body,
      timeoutMs: limits.timeoutMs,
      signal: init.signal ?? undefined,
    };
    const { res } = await follow(String(input), request, policy, deadlineOf(request));
    const maxBytes = limits.maxBytes ?? 4 * 1024 * 1024;
    let size = 0;
    const bounded = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        done(size > maxBytes ? new Error(`the answer passed ${maxBytes} bytes`) : null, chunk);
      },
    });
    res.on('error', (error) => bounded.destroy(error));
    const status = res.statusCode ?? 0;
    const headers = new Headers();
    for (const [name, value] of Object.entries(headersOf(res))) headers.set(name, value);
    const empty = status === 204 || status === 304 || init.method === 'HEAD';
    if (empty) res.resume();
    return new Response(empty ? null : (Readable.toWeb(res.pipe(bounded)) as ReadableStream<Uint8Array>), { status, headers });
  };
}
