import { createHash, createHmac } from 'node:crypto';
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

const sha256Hex = (data: string) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/** A signer: the request's headers with host, x-amz-date, the session token if any, and Authorization. */
export function sigV4Signer(): (request: SignedRequest) => Record<string, string> {
  let signingKey: { id: string; key: Buffer } | undefined;
  const keyFor = (secret: string, day: string, region: string, service: string): Buffer => {
    const id = `${day}/${region}/${service}/${secret}`;
    if (signingKey?.id !== id) signingKey = { id, key: hmac(hmac(hmac(hmac(`AWS4${secret}`, day), region), service), 'aws4_request') };
    return signingKey.key;
  };
  return (request) => sign(request, keyFor);
}

function sign({ credentials, region, service, host, headers, body, now }: SignedRequest, keyFor: (secret: string, day: string, region: string, service: string) => Buffer): Record<string, string> {
  const amzDate = now.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const all: Record<string, string> = { ...headers, host, 'x-amz-date': amzDate, ...(credentials.sessionToken ? { 'x-amz-security-token': credentials.sessionToken } : {}) };
  const names = Object.keys(all).sort();
  const canonical = ['POST', '/', '', ...names.map((n) => `${n}:${all[n]!.trim()}`), '', names.join(';'), sha256Hex(body)].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const signature = createHmac('sha256', keyFor(credentials.secretAccessKey, day, region, service))
    .update(`AWS4-HMAC-SHA256\n${amzDate}\n${scope}\n${sha256Hex(canonical)}`)
    .digest('hex');
  return { ...all, authorization: `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}` };
}
