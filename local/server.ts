import { serve } from '@hono/node-server';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { config } from '../shared/config';
import { log } from '../shared/log';
import { useDynamoEndpoint } from '../shared/store/client';
import { ensureTable } from '../shared/store/ensure-table';
import { localCredentials } from './credentials';
import { ensureDevTenant } from './dev-tenant';
import { startDynamoDbLocal, type RunningDynamoDb } from './dynamodb-local';
import { createLocalApp } from './local-app';

/** `npm start`: every route group on one port against DynamoDB Local. */
async function main() {
  const inMemory = config.dataDir === ':memory:';
  const dataDir = inMemory ? undefined : config.dataDir;
  let dynamo: RunningDynamoDb | undefined;
  let endpoint = config.dynamodbEndpoint;
  if (!endpoint) {
    dynamo = await startDynamoDbLocal({ dataDir });
    endpoint = dynamo.endpoint;
  }
  useDynamoEndpoint(endpoint);
  const admin = new DynamoDBClient({
    endpoint,
    region: config.region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  await ensureTable(admin, config.tableName);
  admin.destroy();

  const credentials = localCredentials(dataDir, {
    devApiKey: config.devApiKey,
    platformAdminToken: config.platformAdminToken,
  });
  await ensureDevTenant(credentials.devApiKey, config.devApiKeyPlan);

  const server = serve({ fetch: createLocalApp().fetch, port: config.port, hostname: '0.0.0.0' });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const base = `http://localhost:${config.port}`;
  process.stdout.write(
    [
      '',
      `Cairn is running at ${base}`,
      `  Public API      ${base}/v1   (header X-API-Key)`,
      `  API reference   ${base}/v1/docs`,
      `  Platform API    ${base}/platform`,
      `  Health          ${base}/healthz`,
      `  DynamoDB        ${endpoint}${dynamo ? ` (DynamoDB Local, ${inMemory ? 'in memory' : `data in ${config.dataDir}`})` : ''}`,
      '',
      `  DEV_API_KEY=${credentials.devApiKey}   (plan ${config.devApiKeyPlan})`,
      `  PLATFORM_ADMIN_TOKEN=${credentials.platformAdminToken}`,
      '',
      `  Try: curl -s ${base}/v1/agents -H "X-API-Key: ${credentials.devApiKey}"`,
      '',
    ].join('\n') + '\n',
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await dynamo?.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error: unknown) => {
  process.stderr.write(`Cairn could not start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
