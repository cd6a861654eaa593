/**
 * The CPU one DynamoDB call costs this process, by client: the SDK's document client (what the
 * store used before), the SDK's own client with its middleware cached, the store's client
 * (shared/store/dynamo-client.ts) and a bare unsigned HTTP exchange (the floor: what the wire
 * itself costs). The same GetItem, 16 in flight, against DynamoDB Local; rounds interleaved and
 * the best of three kept, since the machine is shared. Writes bench/results/dynamo-client.json.
 */
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { Agent, request } from 'node:http';
import { startDynamoDbLocal } from '../local/dynamodb-local';
import { createDynamoClient } from '../shared/store/dynamo-client';
import { GetCommand as StoreGetCommand } from '../shared/store/dynamo-commands';
import { runBench, writeResults } from './common';

const CALLS = Number(process.env.BENCH_CALLS ?? 3000);
const TABLE = 'cairn-bench-client';

async function main() {
  const dynamo = await startDynamoDbLocal();
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  const sdk = (cacheMiddleware: boolean) => new DynamoDBClient({ region: 'us-east-1', endpoint: dynamo.endpoint, credentials, cacheMiddleware });
  const setup = sdk(false);
  const { CreateTableCommand } = await import('@aws-sdk/client-dynamodb');
  await setup.send(new CreateTableCommand({ TableName: TABLE, BillingMode: 'PAY_PER_REQUEST', AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }], KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }] }));
  const document = DynamoDBDocumentClient.from(sdk(false));
  const cached = sdk(true);
  const ours = createDynamoClient({ region: 'us-east-1', endpoint: dynamo.endpoint, credentials });
  const agent = new Agent({ keepAlive: true, maxSockets: 50 });
  const url = new URL(dynamo.endpoint);
  const body = JSON.stringify({ TableName: TABLE, Key: { pk: { S: 'a' } } });
  const bare = () =>
    new Promise((resolve, reject) => {
      const req = request(
        { host: url.hostname, port: url.port, method: 'POST', path: '/', agent, headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.GetItem', authorization: `AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0`, 'content-length': Buffer.byteLength(body) } },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve(JSON.parse(text)));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const clients: Record<string, () => Promise<unknown>> = {
    'SDK document client (the store before)': () => document.send(new GetCommand({ TableName: TABLE, Key: { pk: 'a' } })),
    'SDK client, middleware cached': () => cached.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'a' } } })),
    'store client (dynamo-client.ts)': () => ours.send(new StoreGetCommand({ TableName: TABLE, Key: { pk: 'a' } })),
    'bare HTTP, unsigned (the floor)': bare,
  };
  const best: Record<string, { cpuMsPerCall: number; callsPerSecond: number }> = {};
  for (let round = 0; round < 3; round++) {
    for (const [name, call] of Object.entries(clients)) {
      const run = async (n: number) => {
        let i = 0;
        await Promise.all(Array.from({ length: 16 }, async () => { while (i++ < n) await call(); }));
      };
      await run(500); // warm-up: JIT and sockets
      const cpu = process.cpuUsage();
      const started = performance.now();
      await run(CALLS);
      const used = process.cpuUsage(cpu);
      const result = { cpuMsPerCall: Math.round(((used.user + used.system) / 1000 / CALLS) * 1000) / 1000, callsPerSecond: Math.round(CALLS / ((performance.now() - started) / 1000)) };
      if (!best[name] || result.cpuMsPerCall < best[name].cpuMsPerCall) best[name] = result;
    }
  }
  const floor = best['bare HTTP, unsigned (the floor)']!.cpuMsPerCall;
  const results = Object.fromEntries(Object.entries(best).map(([name, r]) => [name, { ...r, cpuVsFloor: Math.round((r.cpuMsPerCall / floor) * 10) / 10 }]));
  writeResults('dynamo-client', { date: new Date().toISOString(), node: process.version, callsPerClient: CALLS, concurrency: 16, results });
  await dynamo.stop();
}

runBench(main);
