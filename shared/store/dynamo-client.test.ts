import { SignatureV4 } from '@smithy/signature-v4';
import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { crc32 } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { config } from '../config';
import { createDynamoClient } from './dynamo-client';
import { ConditionalCheckFailedException, GetCommand, PutCommand, QueryCommand, TransactionCanceledException, TransactWriteCommand, UpdateCommand } from './dynamo-commands';

/**
 * The store's DynamoDB client speaks the JSON protocol itself: against DynamoDB Local it must read
 * and write what the SDK would (binary values, items in errors, cancellation reasons), and against
 * a local server standing in for DynamoDB, sign what it sends and retry what the SDK retries.
 */
const client = createDynamoClient({ region: config.region, endpoint: config.dynamodbEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
const TableName = config.tableName;
const pk = `dynamo-client-${Date.now()}`;

describe('the store’s DynamoDB client against DynamoDB Local', () => {
  it('writes and reads every kind of value, binary ones included, as the document client does', async () => {
    const item = { pk, sk: 'kinds', s: 'text ä', n: 12.5, big: 2 ** 40, t: true, nil: null, list: [1, 'two', { three: [3] }], map: { a: { b: 'c' } }, bin: new Uint8Array([0, 1, 2, 255]), strings: new Set(['x', 'y']), bins: new Set([new Uint8Array([7]), new Uint8Array([8, 9])]) };
    await client.send(new PutCommand({ TableName, Item: item }));
    const { Item } = await client.send(new GetCommand({ TableName, Key: { pk, sk: 'kinds' }, ConsistentRead: true }));
    expect({ ...Item, bin: [...(Item!.bin as Uint8Array)], bins: [...(Item!.bins as Set<Uint8Array>)].map((b) => [...b]).sort() }).toEqual({ ...item, bin: [0, 1, 2, 255], bins: [[7], [8, 9]] });
    // Absent items are no Item, not an error.
    expect((await client.send(new GetCommand({ TableName, Key: { pk, sk: 'absent' } }))).Item).toBeUndefined();
  });

  it('pages a query by its key and reports the capacity it used', async () => {
    for (let i = 0; i < 5; i++) await client.send(new PutCommand({ TableName, Item: { pk: `${pk}-q`, sk: `s${i}`, i } }));
    const first = await client.send(new QueryCommand({ TableName, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': `${pk}-q` }, Limit: 3, ReturnConsumedCapacity: 'TOTAL' }));
    expect(first.Items!.map((x) => x.i)).toEqual([0, 1, 2]);
    expect(first.LastEvaluatedKey).toEqual({ pk: `${pk}-q`, sk: 's2' });
    expect(first.ConsumedCapacity?.CapacityUnits).toBeGreaterThan(0);
    const rest = await client.send(new QueryCommand({ TableName, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': `${pk}-q` }, ExclusiveStartKey: first.LastEvaluatedKey }));
    expect(rest.Items!.map((x) => x.i)).toEqual([3, 4]);
  });

  it('fails a condition with the SDK’s exception, the stored item in it, and a transaction with its reasons', async () => {
    await client.send(new PutCommand({ TableName, Item: { pk, sk: 'counter', n: 5 } }));
    const failed = await client
      .send(new UpdateCommand({ TableName, Key: { pk, sk: 'counter' }, UpdateExpression: 'ADD n :one', ConditionExpression: 'n < :max', ExpressionAttributeValues: { ':one': 1, ':max': 5 }, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }))
      .catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ConditionalCheckFailedException);
    expect((failed as ConditionalCheckFailedException).Item).toEqual({ pk: { S: pk }, sk: { S: 'counter' }, n: { N: '5' } });
    expect((failed as ConditionalCheckFailedException).$metadata.httpStatusCode).toBe(400);
    const cancelled = await client
      .send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName, Item: { pk, sk: 'tx' } } }, { ConditionCheck: { TableName, Key: { pk, sk: 'counter' }, ConditionExpression: 'attribute_not_exists(pk)' } }] }))
      .catch((e: unknown) => e);
    expect(cancelled).toBeInstanceOf(TransactionCanceledException);
    expect((cancelled as TransactionCanceledException).CancellationReasons?.map((r) => r.Code)).toEqual(['None', 'ConditionalCheckFailed']);
  });

  it('names other refusals by DynamoDB’s own error name', async () => {
    const refused = await client.send(new GetCommand({ TableName: 'no-such-table-here', Key: { pk, sk: 'x' } })).catch((e: unknown) => e);
    expect(refused).toMatchObject({ name: 'ResourceNotFoundException', $fault: 'client' });
  });
});

/** A local server in DynamoDB's place: answers from a script, recording what it was sent. */
async function standIn(answers: Array<(res: ServerResponse, req: IncomingMessage) => void>) {
  const seen: Array<{ headers: IncomingMessage['headers']; body: string }> = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ headers: req.headers, body });
      const answer = answers[Math.min(seen.length - 1, answers.length - 1)]!;
      answer(res, req);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}
const servers: Array<ReturnType<typeof createServer>> = [];
afterEach(() => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});
const json = (status: number, body: unknown) => (res: ServerResponse) => {
  res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0' });
  res.end(JSON.stringify(body));
};

class Sha256 {
  private h;
  constructor(secret?: Uint8Array | string) {
    this.h = secret ? createHmac('sha256', secret) : createHash('sha256');
  }
  update(d: Uint8Array | string) {
    this.h.update(d);
  }
  digest() {
    return Promise.resolve(new Uint8Array(this.h.digest()));
  }
}

describe('the store’s DynamoDB client on the wire', () => {
  const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'session-token' };

  /** Re-signs a request as received, with the date it carries, by the SDK's own signer (told not to add a payload-hash header, which only S3 requires). */
  async function resigned(received: { headers: IncomingMessage['headers']; body: string }, endpoint: string, creds: typeof credentials | Omit<typeof credentials, 'sessionToken'>) {
    const auth = String(received.headers.authorization);
    const signedNames = /SignedHeaders=([^,]+)/.exec(auth)![1]!.split(';');
    const amzDate = String(received.headers['x-amz-date']);
    const signingDate = new Date(`${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`);
    const url = new URL(endpoint);
    const headers = Object.fromEntries(signedNames.filter((n) => !['x-amz-date', 'x-amz-security-token'].includes(n)).map((n) => [n, String(received.headers[n])]));
    const check = await new SignatureV4({ credentials: creds, region: 'eu-west-1', service: 'dynamodb', sha256: Sha256 as never, applyChecksum: false }).sign(
      { method: 'POST', protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: '/', query: {}, headers, body: received.body },
      { signingDate },
    );
    return { signedNames, auth, expected: check.headers.authorization };
  }

  it('signs exactly what it sends: the signature checks out from the headers and body the server received', async () => {
    const server = await standIn([json(200, { Item: { pk: { S: 'a' } } }), json(200, {})]);
    const wire = createDynamoClient({ region: 'eu-west-1', endpoint: server.endpoint, credentials });
    expect((await wire.send(new GetCommand({ TableName: 'table', Key: { pk: 'a', sk: 'ü' } }))).Item).toEqual({ pk: 'a' });
    const [first] = server.seen as Array<{ headers: IncomingMessage['headers']; body: string }>;
    expect(first!.headers['x-amz-target']).toBe('DynamoDB_20120810.GetItem');
    expect(first!.headers['content-type']).toBe('application/x-amz-json-1.0');
    expect(first!.headers['x-amz-security-token']).toBe('session-token');
    expect(JSON.parse(first!.body)).toMatchObject({ TableName: 'table', Key: { pk: { S: 'a' }, sk: { S: 'ü' } } });
    const checked = await resigned(first!, server.endpoint, credentials);
    expect(checked.signedNames).toEqual(expect.arrayContaining(['host', 'x-amz-date', 'x-amz-target', 'x-amz-security-token', 'content-type']));
    expect(checked.auth).toBe(checked.expected);

    // Other credentials (rotated, no session token): a signing key of their own, not the first one's.
    const rotated = { accessKeyId: 'AKIDROTATED', secretAccessKey: 'another/secret+key' };
    await createDynamoClient({ region: 'eu-west-1', endpoint: server.endpoint, credentials: rotated }).send(new GetCommand({ TableName: 'table', Key: { pk: 'b' } }));
    const second = (server.seen as Array<{ headers: IncomingMessage['headers']; body: string }>)[1]!;
    expect(second.headers['x-amz-security-token']).toBeUndefined();
    const again = await resigned(second, server.endpoint, rotated);
    expect(again.auth).toBe(again.expected);
  });

  it('retries throttling, server faults and dropped connections, as the SDK does, and not a refused request', async () => {
    const flaky = await standIn([
      json(400, { __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException', message: 'slow down' }),
      json(500, { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'oops' }),
      (res) => res.socket!.destroy(),
      json(200, { Item: { pk: { S: 'ok' } } }),
    ]);
    const wire = createDynamoClient({ region: 'eu-west-1', endpoint: flaky.endpoint, credentials });
    expect((await wire.send(new GetCommand({ TableName: 'table', Key: { pk: 'ok' } }))).Item).toEqual({ pk: 'ok' });
    expect(flaky.seen).toHaveLength(4);

    const refusing = await standIn([json(400, { __type: 'com.amazon.coral.validate#ValidationException', message: 'One or more parameter values were invalid' })]);
    const error = await createDynamoClient({ region: 'eu-west-1', endpoint: refusing.endpoint, credentials })
      .send(new GetCommand({ TableName: 'table', Key: { pk: 'x' } }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'ValidationException', message: 'One or more parameter values were invalid', $fault: 'client' });
    expect(refusing.seen).toHaveLength(1);
  });

  it('drops an attempt that gets no answer and retries it', async () => {
    const silentOnce = await standIn([() => undefined, json(200, { Item: { pk: { S: 'late' } } })]);
    const wire = createDynamoClient({ region: 'eu-west-1', endpoint: silentOnce.endpoint, credentials, answerTimeoutMs: 200 });
    expect((await wire.send(new GetCommand({ TableName: 'table', Key: { pk: 'late' } }))).Item).toEqual({ pk: 'late' });
    expect(silentOnce.seen).toHaveLength(2);
  });

  it('retries an answer that fails its CRC32 check', async () => {
    const body = JSON.stringify({ Item: { pk: { S: 'intact' } } });
    const damaged = await standIn([
      (res) => {
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0', 'x-amz-crc32': String((crc32(body) + 1) >>> 0) });
        res.end(body);
      },
      (res) => {
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0', 'x-amz-crc32': String(crc32(body)) });
        res.end(body);
      },
    ]);
    const wire = createDynamoClient({ region: 'eu-west-1', endpoint: damaged.endpoint, credentials });
    expect((await wire.send(new GetCommand({ TableName: 'table', Key: { pk: 'intact' } }))).Item).toEqual({ pk: 'intact' });
    expect(damaged.seen).toHaveLength(2);
  });

  it('gives up after four attempts with the last error', async () => {
    const down = await standIn([json(503, { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'down' })]);
    const error = await createDynamoClient({ region: 'eu-west-1', endpoint: down.endpoint, credentials })
      .send(new GetCommand({ TableName: 'table', Key: { pk: 'x' } }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'InternalServerError', $fault: 'server', $metadata: { httpStatusCode: 503, attempts: 4 } });
    expect(down.seen).toHaveLength(4);
  });
});
