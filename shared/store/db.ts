import {
  DynamoDBClient,
  InternalServerError,
  ProvisionedThroughputExceededException,
  RequestLimitExceeded,
  ThrottlingException,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import { UnavailableError } from '../errors';
import { cursorCodec, type CursorCodec } from './cursor';
import { countDynamoRequest } from './request-metrics';

/** Throttling and server faults: the SDK's own classes, and any service error it marks as the server's. */
const UNAVAILABLE_ERRORS = [ProvisionedThroughputExceededException, ThrottlingException, RequestLimitExceeded, InternalServerError];
const NETWORK_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Throttling, server and network failures that outlived the SDK's retries are the caller's 503
 * (retry later), not a 500: the request was fine, the store was not reachable.
 */
function unavailable(error: unknown): UnavailableError | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: string }).code;
  const serverFault = (error as { $fault?: string }).$fault === 'server';
  if (UNAVAILABLE_ERRORS.some((type) => error instanceof type) || serverFault || (code && NETWORK_ERRORS.has(code))) {
    return new UnavailableError('The data store is temporarily unavailable; retry shortly', { cause: error });
  }
  return undefined;
}

/** The store's handle on DynamoDB: one per runtime, passed to every entity store. */
export interface Db {
  readonly client: DynamoDBDocumentClient;
  readonly table: string;
  /** Signs and checks the pagination cursors lists hand out. */
  readonly cursors: CursorCodec;
}

/**
 * A DynamoDB handle on the given endpoint, else DYNAMODB_ENDPOINT (DynamoDB Local, which accepts
 * any credentials), else AWS's (the function's role); cursors signed with the given key, else
 * CURSOR_SIGNING_KEY.
 */
export function createDb(options: { endpoint?: string; cursorKey?: string } = {}): Db {
  return {
    client: createClient(options.endpoint ?? config.dynamodbEndpoint, config.region),
    table: config.tableName,
    cursors: cursorCodec(options.cursorKey ?? config.cursorSigningKey),
  };
}

function createClient(endpoint: string | undefined, region: string): DynamoDBDocumentClient {
  const base = new DynamoDBClient({
    region,
    maxAttempts: 4,
    // DynamoDB Local accepts any credentials; in AWS the Lambda role's credentials are used.
    ...(endpoint ? { endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
  });
  base.middlewareStack.add(
    (next, context) => async (args) => {
      // Ask every operation for the capacity it consumes: logs, spans, usage and benchmarks report it.
      const input = args.input as { ReturnConsumedCapacity?: string };
      input.ReturnConsumedCapacity ??= 'TOTAL';
      try {
        const result = await next(args);
        const units = capacityOf((result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity);
        countDynamoRequest(READS.test(context.commandName ?? '') ? { read: units, write: 0 } : { read: 0, write: units });
        return result;
      } catch (error) {
        countDynamoRequest({ read: 0, write: 0 });
        throw unavailable(error) ?? error;
      }
    },
    { step: 'initialize', name: 'cairnRequestCounter' },
  );
  return DynamoDBDocumentClient.from(base, {
    marshallOptions: { removeUndefinedValues: true, convertEmptyValues: false },
  });
}

const READS = /^(Get|BatchGet|Query|Scan|TransactGet)/;

function capacityOf(consumed: unknown): number {
  const list = (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) as Array<{ CapacityUnits?: number }>;
  return list.reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
}
