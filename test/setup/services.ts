import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from '../../local/dynamodb-local';
import { startS3Local } from '../../local/s3-local';
import { ensureTableAt } from '../../shared/store/ensure-table';
import { startPostgres, type PostgresTarget } from './postgres';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
    postgres: PostgresTarget;
    s3Endpoint: string;
  }
}

/**
 * One DynamoDB Local (in memory), one PostgreSQL and one S3-compatible server for the whole run;
 * tests isolate themselves by tenant (DynamoDB, the files bucket), by table name (PostgreSQL) and
 * by key prefix (the bucket `s3` sources read).
 */
/** The files bucket (BLOB_BUCKET) and a bucket `s3` sources may read (S3_SOURCE_BUCKETS), set in env.ts. */
export const TEST_BUCKET = 'cairn-test';
export const TEST_SOURCE_BUCKET = 'cairn-test-documents';

export default async function setup(project: TestProject) {
  const [dynamo, postgres, s3] = await Promise.all([startDynamoDbLocal(), startPostgres(), startS3Local({ buckets: [TEST_BUCKET, TEST_SOURCE_BUCKET] })]);
  project.provide('s3Endpoint', s3.endpoint);
  project.provide('postgres', postgres.target);
  await ensureTableAt(dynamo.endpoint, 'cairn-test');
  project.provide('dynamoEndpoint', dynamo.endpoint);
  return async () => {
    await dynamo.stop();
    await postgres.stop();
    await s3.stop();
  };
}
