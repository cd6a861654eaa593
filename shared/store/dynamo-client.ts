import type { AwsCredentialIdentity } from '@smithy/types';
import { marshall, unmarshall, type marshallOptions } from '@aws-sdk/util-dynamodb';
import { ConditionalCheckFailedException, DynamoDBServiceException, TransactionCanceledException, type DocumentCommand, type KeyNodes } from './dynamo-commands';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { crc32 } from 'node:zlib';
import { sigV4Signer } from './sigv4';

/**
 * DynamoDB's JSON protocol over keep-alive HTTP, signed with SigV4 (sigv4.ts), for the
 * document commands every store builds (dynamo-commands.ts: lib-dynamodb's, by name and shape).
 *
 * Why not the SDK's client: per call it resolves a middleware stack and runs serde, endpoint,
 * retry, user-agent and logging middleware, about 0.25 ms of CPU where the HTTP exchange itself
 * costs 0.04 (`npx tsx bench/dynamo-client.ts`), and the document client marshals its input a
 * second time around that. A GET of the API makes a call, a converse turn about seven
 * (docs/capacity.md): in Lambda that is billed time on every request. Here each command's input
 * is marshalled once (util-dynamodb, with lib-dynamodb's own map of which fields hold items) and
 * its output unmarshalled once; errors carry the SDK's names and fields
 * (`ConditionalCheckFailedException` with its `Item`…); throttling, server faults and dropped
 * connections are retried as the SDK's standard mode does (4 attempts, jittered exponential
 * backoff).
 */
export interface DocumentSender {
  send<Output>(command: DocumentCommand<unknown, Output>): Promise<Output>;
}

export interface DynamoClientOptions {
  region: string;
  /** DynamoDB Local (any credentials) or another endpoint; else AWS's regional endpoint. */
  endpoint?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  maxAttempts?: number;
  /** How long an attempt may wait for DynamoDB's answer before it is dropped and retried (default 10 s). */
  answerTimeoutMs?: number;
  /** Around every call (retries inside): what the store adds to each request. */
  around?: <T>(operation: string, input: Record<string, unknown>, send: () => Promise<T>) => Promise<T>;
}

const THROTTLES = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded', 'TransactionInProgressException']);
const DROPPED = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'ECRC32']);

/**
 * Whether a failure is DynamoDB's passing trouble rather than the request's: throttling, a server
 * fault, a dropped, silent or damaged connection. These are retried here, and what outlives the
 * retries is the caller's 503 (db.ts).
 */
export function isTransient(error: unknown): boolean {
  if (error instanceof DynamoDBServiceException) return error.$fault === 'server' || THROTTLES.has(error.name);
  return DROPPED.has((error as { code?: string }).code ?? '');
}

const MARSHALL: marshallOptions = { removeUndefinedValues: true, convertEmptyValues: false, convertTopLevelContainer: true };
const UNMARSHALL = { convertWithoutMapWrapper: true };

/**
 * lib-dynamodb's walk: `null` marks a value to convert whole; `{}` or `[]` every value of an
 * object or array; `{'*': nodes}` every entry by `nodes`; other keys the fields they name.
 */
function convert(value: unknown, nodes: KeyNodes, fn: (v: unknown) => unknown): unknown {
  if (value === undefined) return undefined;
  if (nodes === null) return fn(value);
  const names = Object.keys(nodes);
  const all = names.length === 0;
  if (all || (names.length === 1 && names[0] === '*')) {
    const each: KeyNodes = all ? null : (nodes as Record<string, KeyNodes>)['*']!;
    if (Array.isArray(value)) return value.map((v) => convert(v, each, fn));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const converted = convert(v, each, fn);
      if (converted !== undefined) out[k] = converted;
    }
    return out;
  }
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const name of names) {
    const converted = convert(out[name], (nodes as Record<string, KeyNodes>)[name]!, fn);
    if (converted !== undefined) out[name] = converted;
  }
  return out;
}

/** Binary attributes travel as base64 (JSON.stringify would call a Buffer's toJSON first: look at the holder's own value). */
function binaryAsBase64(this: Record<string, unknown>, key: string, value: unknown) {
  const raw = this[key];
  return raw instanceof Uint8Array ? Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('base64') : value;
}
/** Whether a request holds binary values: most hold none, and JSON.stringify is twice as fast without a replacer. */
function hasBinary(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (value instanceof Uint8Array) return true;
  if (Array.isArray(value)) return value.some(hasBinary);
  for (const key in value) if (hasBinary((value as Record<string, unknown>)[key])) return true;
  return false;
}
function binaryFromBase64(key: string, value: unknown) {
  if (key === 'B' && typeof value === 'string') return Buffer.from(value, 'base64');
  if (key === 'BS' && Array.isArray(value)) return value.map((v: string) => Buffer.from(v, 'base64'));
  return value;
}

class ResponseError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`DynamoDB answered ${status}`);
  }
}

let chain: (() => Promise<AwsCredentialIdentity>) | undefined;
/**
 * Lambda hands its role's credentials over in the environment; anywhere else (an instance role,
 * SSO, a profile) the SDK's default chain finds them, loaded only then: it is 80 ms of imports.
 */
async function awsCredentials(): Promise<AwsCredentialIdentity> {
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_SESSION_TOKEN: sessionToken } = process.env;
  if (accessKeyId && secretAccessKey) return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
  chain ??= (await import('@aws-sdk/credential-provider-node')).defaultProvider();
  return chain();
}

export function createDynamoClient(options: DynamoClientOptions): DocumentSender {
  const url = new URL(options.endpoint ?? `https://dynamodb.${options.region}.amazonaws.com`);
  const secure = url.protocol === 'https:';
  // As many sockets as the SDK's handler allows by default; kept alive between calls.
  const agent = secure ? new HttpsAgent({ keepAlive: true, maxSockets: 50 }) : new HttpAgent({ keepAlive: true, maxSockets: 50 });
  const send = secure ? httpsRequest : httpRequest;
  const port = url.port ? Number(url.port) : undefined;
  const credentials = options.credentials ? () => Promise.resolve(options.credentials!) : awsCredentials;
  const signRequest = sigV4Signer();
  const maxAttempts = options.maxAttempts ?? 4;
  // DynamoDB answers in milliseconds; a connection that went quiet is retried rather than waited
  // on until the Lambda's own timeout.
  const answerTimeoutMs = options.answerTimeoutMs ?? 10_000;
  const around = options.around ?? ((_op, _input, call) => call());

  async function exchange(operation: string, body: string): Promise<string> {
    const headers = signRequest({
      credentials: await credentials(),
      region: options.region,
      service: 'dynamodb',
      host: url.host,
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': `DynamoDB_20120810.${operation}`,
        'content-length': String(Buffer.byteLength(body)),
      },
      body,
      // The wall clock, not the runtime's: AWS refuses a signature more than five minutes off real time.
      now: new Date(),
    });
    return new Promise<string>((resolve, reject) => {
      const req = send({ host: url.hostname, port, method: 'POST', path: '/', agent, headers }, (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const bytes = Buffer.concat(chunks);
          // DynamoDB sends the CRC32 of every answer; one damaged on the way is retried, as the SDK does.
          const crc = res.headers['x-amz-crc32'];
          if (typeof crc === 'string' && crc32(bytes) !== Number(crc)) {
            reject(Object.assign(new Error('DynamoDB’s answer failed its CRC32 check'), { code: 'ECRC32' }));
            return;
          }
          const text = bytes.toString('utf8');
          if (res.statusCode === 200) resolve(text);
          else reject(new ResponseError(res.statusCode ?? 0, text));
        });
      });
      req.on('error', reject);
      req.setTimeout(answerTimeoutMs, () => req.destroy(Object.assign(new Error(`DynamoDB did not answer within ${answerTimeoutMs} ms`), { code: 'ETIMEDOUT' })));
      req.end(body);
    });
  }

  /** The SDK's exception for an error answer, with the fields DynamoDB sent (Item, CancellationReasons…). */
  function exceptionOf(error: ResponseError, attempts: number): DynamoDBServiceException {
    let fields: Record<string, unknown> & { __type?: string; message?: string; Message?: string } = {};
    try {
      fields = JSON.parse(error.body) as typeof fields;
    } catch {
      // A proxy's or load balancer's page: the status says enough.
    }
    const name = (fields.__type ?? '').replace(/^.*#/, '') || (error.status >= 500 ? 'InternalServerError' : 'UnknownError');
    const message = fields.message ?? fields.Message ?? error.message;
    const $metadata = { httpStatusCode: error.status, attempts };
    const { __type: _type, message: _m, Message: _M, ...rest } = fields;
    if (name === 'ConditionalCheckFailedException') return new ConditionalCheckFailedException({ ...rest, message, $metadata });
    if (name === 'TransactionCanceledException') return new TransactionCanceledException({ ...rest, message, $metadata });
    return Object.assign(new DynamoDBServiceException({ name, $fault: error.status >= 500 ? 'server' : 'client', message, $metadata }), rest);
  }

  async function call(operation: string, body: string): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await exchange(operation, body);
      } catch (caught) {
        const error = caught instanceof ResponseError ? exceptionOf(caught, attempt) : caught;
        if (attempt >= maxAttempts || !isTransient(error)) throw error;
        // Full jitter, as the SDK's standard mode: throttling backs off from 500 ms, the rest from 100 ms.
        const base = error instanceof DynamoDBServiceException && THROTTLES.has(error.name) ? 500 : 100;
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(20_000, base * 2 ** (attempt - 1))));
      }
    }
  }

  return {
    send: (async (command: DocumentCommand<Record<string, unknown>, unknown>) => {
      const { operation } = command;
      return around(operation, command.input, async () => {
        const input = convert(command.input, command.inputKeyNodes, (v) => marshall(v, MARSHALL));
        const body = hasBinary(input) ? JSON.stringify(input, binaryAsBase64) : JSON.stringify(input);
        const text = await call(operation, body);
        const output = JSON.parse(text, text.includes('"B') ? binaryFromBase64 : undefined) as Record<string, unknown>;
        return convert(output, command.outputKeyNodes, (v) => unmarshall(v as never, UNMARSHALL));
      });
    }) as DocumentSender['send'],
  };
}
