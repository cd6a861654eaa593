import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import { countDynamoRequest } from './request-metrics';

let client: DynamoDBDocumentClient | undefined;

function create(endpoint: string | undefined): DynamoDBDocumentClient {
  const base = new DynamoDBClient({
    region: config.region,
    maxAttempts: 4,
    // DynamoDB Local accepts any credentials; in AWS the Lambda role's credentials are used.
    ...(endpoint ? { endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
  });
  base.middlewareStack.add(
    (next) => (args) => {
      countDynamoRequest();
      return next(args);
    },
    { step: 'initialize', name: 'cairnRequestCounter' },
  );
  return DynamoDBDocumentClient.from(base, {
    marshallOptions: { removeUndefinedValues: true, convertEmptyValues: false },
  });
}

/** The shared document client, created on first use from config. */
export function documentClient(): DynamoDBDocumentClient {
  client ??= create(config.dynamodbEndpoint);
  return client;
}

/** Local mode and tests point the store at the DynamoDB Local they started. */
export function useDynamoEndpoint(endpoint: string): void {
  client?.destroy();
  client = create(endpoint);
}

export function tableName(): string {
  return config.tableName;
}
