import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
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
  /** Host names or addresses allowed whatever they resolve to (TOOL_ALLOWED_HOSTS). */
  allowedHosts: ReadonlySet<string>;
  /** Private, loopback and link-local addresses allowed (TOOL_ALLOW_PRIVATE_NETWORKS: tests, local demos). */
  allowPrivateNetworks: boolean;
}

export const outboundPolicyFromConfig = (): OutboundPolicy => ({
  allowedHosts: new Set(config.toolAllowedHosts),
  allowPrivateNetworks: config.toolAllowPrivateNetworks,
});

export interface OutboundRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Whole exchange, redirects included (default 10 s). */
  timeoutMs?: number;
  /** Bytes of response body kept; the rest is dropped and `truncated` set (default 1 MiB). */
  maxBytes?: number;
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

/** Whether an address may be called: public unicast only, unless private networks are allowed. */
export function addressAllowed(address: string, policy: OutboundPolicy): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  if (METADATA.has(parsed.toNormalizedString()) || METADATA.has(parsed.toString())) return false;
  const range = parsed.range();
  if (range === 'unicast') return true;
  return policy.allowPrivateNetworks && ['private', 'loopback', 'linkLocal', 'uniqueLocal', 'carrierGradeNat'].includes(range);
}

/** A resolver for the socket that fails when the name resolves to an address the policy refuses. */
function guardedLookup(policy: OutboundPolicy): typeof dnsLookup {
  return ((hostname: string, options: { all?: boolean }, callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const refused = addresses.find((a) => !addressAllowed(a.address, policy));
      if (refused) return callback(Object.assign(new Error(`${hostname} resolves to ${refused.address}, which is not a public address`), { code: 'EREFUSED_ADDRESS' }), []);
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  }) as typeof dnsLookup;
}

function once(url: URL, request: OutboundRequest, policy: OutboundPolicy, signal: AbortSignal, maxBytes: number): Promise<OutboundResponse> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const allowedName = policy.allowedHosts.has(host) || policy.allowedHosts.has(url.host);
  if (ipaddr.isValid(host) && !allowedName && !addressAllowed(host, policy)) {
    return Promise.reject(outboundError('refused', `${host} is not a public address`, host));
  }
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      { method: request.method ?? 'GET', headers: request.headers, signal, ...(allowedName ? {} : { lookup: guardedLookup(policy) }) },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        res.on('data', (chunk: Buffer) => {
          if (truncated) return;
          if (size + chunk.length > maxBytes) {
            chunks.push(chunk.subarray(0, maxBytes - size));
            size = maxBytes;
            truncated = true;
            res.destroy();
            finish();
            return;
          }
          chunks.push(chunk);
          size += chunk.length;
        });
        let done = false;
        const finish = () => {
          if (done) return;
          done = true;
          const headers = Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));
          resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks), truncated, url: url.toString() });
        };
        res.on('end', finish);
        res.on('error', (error) => (truncated ? finish() : reject(error)));
      },
    );
    req.on('error', (error: Error & { code?: string }) => {
      if (signal.aborted) reject(outboundError('timeout', `${url.host} did not answer in time`, host, error));
      else if (error.code === 'EREFUSED_ADDRESS') reject(outboundError('refused', error.message, host, error));
      else reject(outboundError('network', `${url.host} could not be reached (${error.code ?? error.message})`, host, error));
    });
    req.end(request.body);
  });
}

/** Calls a tenant-given URL under the policy (by default the deployment's). */
export async function outboundRequest(target: string, request: OutboundRequest = {}, policy: OutboundPolicy = outboundPolicyFromConfig()): Promise<OutboundResponse> {
  const deadline = AbortSignal.timeout(request.timeoutMs ?? 10_000);
  const signal = request.signal ? AbortSignal.any([deadline, request.signal]) : deadline;
  const maxBytes = request.maxBytes ?? 1024 * 1024;
  let url: URL;
  try {
    url = new URL(target);
  } catch (error) {
    throw outboundError('protocol', `${target} is not a URL`, '', error);
  }
  let current = { ...request };
  for (let hop = 0; ; hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw outboundError('protocol', `Only http and https URLs can be called, not ${url.protocol}`, url.hostname);
    const response = await once(url, current, policy, signal, maxBytes);
    const location = response.headers.location;
    if (!REDIRECTS.has(response.status) || !location) return response;
    if (hop >= (request.maxRedirects ?? 5)) throw outboundError('redirects', `${url.host} redirected more than ${request.maxRedirects ?? 5} times`, url.hostname);
    const next = new URL(location, url);
    // Credentials are for the host they were given for: a redirect elsewhere does not carry them.
    const headers = { ...current.headers };
    if (next.origin !== url.origin) for (const name of Object.keys(headers)) if (/^(authorization|cookie|x-api-key|proxy-authorization)$/i.test(name)) delete headers[name];
    const asGet = response.status === 303 || ((response.status === 301 || response.status === 302) && current.method !== undefined && current.method !== 'GET' && current.method !== 'HEAD');
    current = { ...current, headers, ...(asGet ? { method: 'GET', body: undefined } : {}) };
    url = next;
  }
}
