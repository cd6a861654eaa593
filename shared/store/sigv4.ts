import { createHmac, hash } from 'node:crypto';
import type { AwsCredentialIdentity } from '@smithy/types';

/**
 * AWS Signature Version 4 (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html)
 * for the one request shape the store sends: a POST of a JSON body to `/` with no query string.
 * The SDK's general signer normalises and sorts arbitrary headers, escapes paths and queries and
 * awaits its hashes; this shape needs none of it, and each signer (one per client) derives its
 * signing key once a day.
 * `dynamo-client.test.ts` checks every signature against the SDK's signer.
 */
export interface SignedRequest {
  credentials: AwsCredentialIdentity;
  region: string;
  service: string;
  /** The Host header: host name, and port when not the scheme's default. */
  host: string;
  /** The headers besides host and the signature's own, lower-case names (content-type, x-amz-target…). */
  headers: Record<string, string>;
  body: string;
  now: Date;
}

// One-shot: a Hash object per digest cost more than the digest of a request this size.
const sha256Hex = (data: string) => hash('sha256', data, 'hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/** A signer: the request's headers with host, x-amz-date, the session token if any, and Authorization. */
export function sigV4Signer(): (request: SignedRequest) => Record<string, string> {
  let signingKey: { id: string; key: Buffer } | undefined;
  const keyFor = (secret: string, day: string, region: string, service: string): Buffer => {
    const id = `${day}/${region}/${service}/${secret}`;
    if (signingKey?.id !== id) signingKey = { id, key: hmac(hmac(hmac(hmac(`AWS4${secret}`, day), region), service), 'aws4_request') };
    return signingKey.key;
  };
  // The signature's time is to the second: a busy instance signs many requests in the same one.
  let stamp = { second: NaN, amzDate: '' };
  const amzDateOf = (now: Date): string => {
    const second = Math.floor(now.getTime() / 1000);
    if (stamp.second !== second) stamp = { second, amzDate: now.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '') };
    return stamp.amzDate;
  };
  return (request) => sign(request, amzDateOf(request.now), keyFor);
}

function sign(
  { credentials, region, service, host, headers, body }: SignedRequest,
  amzDate: string,
  keyFor: (secret: string, day: string, region: string, service: string) => Buffer,
): Record<string, string> {
  const day = amzDate.slice(0, 8);
  const all: Record<string, string> = { ...headers, host, 'x-amz-date': amzDate };
  if (credentials.sessionToken) all['x-amz-security-token'] = credentials.sessionToken;
  const names = Object.keys(all).sort();
  let canonical = 'POST\n/\n\n';
  for (const name of names) canonical += `${name}:${all[name]!.trim()}\n`;
  const signedHeaders = names.join(';');
  canonical += `\n${signedHeaders}\n${sha256Hex(body)}`;
  const scope = `${day}/${region}/${service}/aws4_request`;
  const signature = createHmac('sha256', keyFor(credentials.secretAccessKey, day, region, service))
    .update(`AWS4-HMAC-SHA256\n${amzDate}\n${scope}\n${sha256Hex(canonical)}`)
    .digest('hex');
  all.authorization = `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return all;
}
