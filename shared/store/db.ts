import { config } from '../config';
import { AppError, UnavailableError } from '../errors';
import { cursorCodec, type CursorCodec } from './cursor';
import { createDynamoClient, isTransient, type DocumentSender } from './dynamo-client';
import { assertStorableWrite } from './item-limits';
import { countDynamoRequest } from './request-metrics';

/** The store's host not found: not worth retrying at once, but no fault of the request either. */
const UNRESOLVED = new Set(['ENOTFOUND', 'EAI_AGAIN']);

/**
 * Throttling, server and network failures that outlived the client's retries are the caller's 503
 * (retry later), not a 500: the request was fine, the store was not reachable.
 */
function unavailable(error: unknown): UnavailableError | undefined {
  if (!(error instanceof Error)) return undefined;
  if (isTransient(error) || UNRESOLVED.has((error as { code?: string }).code ?? '')) {
    return new UnavailableError('The data store is temporarily unavailable; retry shortly', { cause: error });
  }
  return undefined;
}

/**
 * What DynamoDB refuses to store — an item over 400 KB, a key over its byte limit, a document
 * nested too deep — is the request's fault: a 413 or a 400, never a 500. (Requests are checked for
 * these before they are sent, in item-limits.ts; this catches what those checks cannot see, such as
 * an update growing an item past 400 KB.)
 */
function refusedShape(error: unknown): AppError | undefined {
  if (!(error instanceof Error)) return undefined;
  const messages =
    error.name === 'ValidationException'
      ? [error.message]
      : error.name === 'TransactionCanceledException'
        ? ((error as { CancellationReasons?: Array<{ Code?: string; Message?: string }> }).CancellationReasons ?? []).filter((r) => r.Code === 'ValidationError').map((r) => r.Message ?? '')
        : [];
  if (messages.length === 0) return undefined;
  if (messages.some((m) => /item size|size has exceeded|exceeds? .*size|too large/i.test(m) && !/key/i.test(m))) {
    return new AppError('PAYLOAD_TOO_LARGE', 'What this request would store passes the data store’s item size limit (400 KB): send less', { limit: '400 KB' }, { cause: error });
  }
  if (messages.some((m) => /key/i.test(m))) return new AppError('INVALID_REQUEST', 'A name or path in this request is too long to store (keys hold at most 1,024 bytes of UTF-8)', { limit: '1024 bytes' }, { cause: error });
  if (messages.some((m) => /nest/i.test(m))) return new AppError('INVALID_REQUEST', 'A JSON value in this request is nested too deeply to store', undefined, { cause: error });
  return new AppError('INVALID_REQUEST', 'The data store refused what this request would store', undefined, { cause: error });
}

/** The store's handle on DynamoDB: one per runtime, passed to every entity store. */
export interface Db {
  readonly client: DocumentSender;
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

function createClient(endpoint: string | undefined, region: string): DocumentSender {
  return createDynamoClient({
    region,
    // DynamoDB Local accepts any credentials; in AWS the Lambda role's credentials are used.
    ...(endpoint ? { endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    around: async (operation, input, send) => {
      // Ask every operation for the capacity it consumes: logs, spans, usage and benchmarks report it.
      input.ReturnConsumedCapacity ??= 'TOTAL';
      // Refuse what DynamoDB would refuse before sending it, naming the field (item-limits.ts).
      if (WRITES.test(operation)) assertStorableWrite(input);
      try {
        const output = await send();
        const units = capacityOf((output as { ConsumedCapacity?: unknown }).ConsumedCapacity);
        countDynamoRequest(READS.test(operation) ? { read: units, write: 0 } : { read: 0, write: units });
        return output;
      } catch (error) {
        countDynamoRequest({ read: 0, write: 0 });
        throw unavailable(error) ?? refusedShape(error) ?? error;
      }
    },
  });
}

const READS = /^(Get|BatchGet|Query|Scan|TransactGet)/;
const WRITES = /^(Put|Update|TransactWrite|BatchWrite)/;

function capacityOf(consumed: unknown): number {
  const list = (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) as Array<{ CapacityUnits?: number }>;
  return list.reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
}
