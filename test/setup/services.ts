import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from '../../local/dynamodb-local';
import { ensureTableAt } from '../../shared/store/ensure-table';
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
  await ensureTableAt(dynamo.endpoint, 'cairn-test');
  project.provide('dynamoEndpoint', dynamo.endpoint);
  return async () => {
    await dynamo.stop();
    await postgres.stop();
  };
}
