import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from '../../local/dynamodb-local';
import { ensureTable } from '../../shared/store/ensure-table';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
  }
}

/** One DynamoDB Local (in memory) for the whole run; tests isolate themselves by tenant. */
export default async function setup(project: TestProject) {
  const dynamo = await startDynamoDbLocal();
  const client = new DynamoDBClient({
    endpoint: dynamo.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  await ensureTable(client, 'cairn-test');
  client.destroy();
  project.provide('dynamoEndpoint', dynamo.endpoint);
  return () => dynamo.stop();
}
