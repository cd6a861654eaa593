import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from '../../local/dynamodb-local';
import { ensureTable } from '../../shared/store/ensure-table';
import { startPostgres, type PostgresTarget } from './postgres';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
    postgres: PostgresTarget;
  }
}

/**
 * One DynamoDB Local (in memory) and one PostgreSQL for the whole run; tests isolate themselves by
 * tenant (DynamoDB) and by table name (PostgreSQL).
 */
export default async function setup(project: TestProject) {
  const [dynamo, postgres] = await Promise.all([startDynamoDbLocal(), startPostgres()]);
  project.provide('postgres', postgres.target);
  const client = new DynamoDBClient({
    endpoint: dynamo.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  await ensureTable(client, 'cairn-test');
  client.destroy();
  project.provide('dynamoEndpoint', dynamo.endpoint);
  return async () => {
    await dynamo.stop();
    await postgres.stop();
  };
}
