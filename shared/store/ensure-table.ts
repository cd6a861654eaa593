import {
  CreateTableCommand,
  DynamoDBClient,
  DescribeTableCommand,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { config } from '../config';
import { tableDefinition } from './table-definition';

/**
 * Local mode and tests: creates the table from the shared definition, or checks that an existing
 * one has the definition's keys (a mismatch means an old local database: say so, don't guess).
 */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<'created' | 'exists'> {
  try {
    const out = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const keySchema = out.Table?.KeySchema ?? [];
    const hash = keySchema.find((k) => k.KeyType === 'HASH')?.AttributeName;
    const range = keySchema.find((k) => k.KeyType === 'RANGE')?.AttributeName;
    if (hash !== tableDefinition.partitionKey || range !== tableDefinition.sortKey) {
      throw new Error(
        `Table ${tableName} has keys ${hash}/${range}, expected ${tableDefinition.partitionKey}/${tableDefinition.sortKey} ` +
          `(definition version ${tableDefinition.version}); remove the local data directory to recreate it`,
      );
    }
    return 'exists';
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: tableDefinition.partitionKey, AttributeType: 'S' },
        { AttributeName: tableDefinition.sortKey, AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: tableDefinition.partitionKey, KeyType: 'HASH' },
        { AttributeName: tableDefinition.sortKey, KeyType: 'RANGE' },
      ],
    }),
  );
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: tableDefinition.timeToLiveAttribute, Enabled: true },
    }),
  );
  return 'created';
}

/** Creates (or checks) the table on a DynamoDB Local at `endpoint` (local mode, tests, benchmarks). */
export async function ensureTableAt(endpoint: string, tableName: string): Promise<'created' | 'exists'> {
  const client = new DynamoDBClient({ endpoint, region: config.region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    return await ensureTable(client, tableName);
  } finally {
    client.destroy();
  }
}
