import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type {
  BatchGetCommandInput,
  BatchGetCommandOutput,
  BatchWriteCommandInput,
  BatchWriteCommandOutput,
  DeleteCommandInput,
  DeleteCommandOutput,
  GetCommandInput,
  GetCommandOutput,
  PutCommandInput,
  PutCommandOutput,
  QueryCommandInput,
  QueryCommandOutput,
  ScanCommandInput,
  ScanCommandOutput,
  TransactGetCommandInput,
  TransactGetCommandOutput,
  TransactWriteCommandInput,
  TransactWriteCommandOutput,
  UpdateCommandInput,
  UpdateCommandOutput,
} from '@aws-sdk/lib-dynamodb';

/**
 * The store's DynamoDB commands and errors: lib-dynamodb's document commands and the SDK's
 * exceptions, by the same names and shapes (their types are the SDK's own), without loading the
 * SDK. Importing @aws-sdk/client-dynamodb and lib-dynamodb cost a cold start some 130 ms of
 * module loading for classes the store's client (dynamo-client.ts) does not use: it needs only
 * each command's input, its operation and which of its fields hold items.
 */
export type {
  BatchGetCommandInput,
  BatchWriteCommandInput,
  DeleteCommandInput,
  GetCommandInput,
  PutCommandInput,
  QueryCommandInput,
  ScanCommandInput,
  TransactWriteCommandInput,
  UpdateCommandInput,
};

/** Which fields of an input or output hold items, as lib-dynamodb maps them: `null` a value to convert whole, `{}` or `[]` every value of an object or array, `{'*': nodes}` every entry. */
export type KeyNodes = null | { [key: string]: KeyNodes } | KeyNodes[];

const SELF = null;
const ALL_VALUES = {};
const ALL_MEMBERS: KeyNodes[] = [];
/** The condition fields every single-item write takes (and `Expected`, their legacy form). */
const CONDITIONS = { Expected: { '*': { Value: SELF, AttributeValueList: ALL_MEMBERS } }, ExpressionAttributeValues: ALL_VALUES };
const WRITE_OUTPUT = { Attributes: ALL_VALUES, ItemCollectionMetrics: { ItemCollectionKey: ALL_VALUES } };
const METRICS_BY_TABLE = { ItemCollectionMetrics: { '*': { '*': { ItemCollectionKey: ALL_VALUES } } } };
const WRITE_REQUESTS = { '*': { '*': { PutRequest: { Item: ALL_VALUES }, DeleteRequest: { Key: ALL_VALUES } } } };
/** A legacy filter's conditions (KeyConditions, QueryFilter, ScanFilter): each one's values. */
const FILTER = { '*': { AttributeValueList: ALL_MEMBERS } };
/** What a Query and a Scan share: where a page starts and the expression values, and a page of items. */
const PAGE_INPUT = { ExclusiveStartKey: ALL_VALUES, ExpressionAttributeValues: ALL_VALUES };
const PAGE_OUTPUT = { Items: { '*': ALL_VALUES }, LastEvaluatedKey: ALL_VALUES };

/** A command: its input, the operation it calls and its item fields; `Output` is what sending it resolves to. */
export abstract class DocumentCommand<Input, Output> {
  declare readonly output: Output;
  abstract readonly operation: string;
  abstract readonly inputKeyNodes: KeyNodes;
  abstract readonly outputKeyNodes: KeyNodes;
  constructor(readonly input: Input) {}
}

export class GetCommand extends DocumentCommand<GetCommandInput, GetCommandOutput> {
  readonly operation = 'GetItem';
  readonly inputKeyNodes = { Key: ALL_VALUES };
  readonly outputKeyNodes = { Item: ALL_VALUES };
}
export class PutCommand extends DocumentCommand<PutCommandInput, PutCommandOutput> {
  readonly operation = 'PutItem';
  readonly inputKeyNodes = { Item: ALL_VALUES, ...CONDITIONS };
  readonly outputKeyNodes = WRITE_OUTPUT;
}
export class UpdateCommand extends DocumentCommand<UpdateCommandInput, UpdateCommandOutput> {
  readonly operation = 'UpdateItem';
  readonly inputKeyNodes = { Key: ALL_VALUES, AttributeUpdates: { '*': { Value: SELF } }, ...CONDITIONS };
  readonly outputKeyNodes = WRITE_OUTPUT;
}
export class DeleteCommand extends DocumentCommand<DeleteCommandInput, DeleteCommandOutput> {
  readonly operation = 'DeleteItem';
  readonly inputKeyNodes = { Key: ALL_VALUES, ...CONDITIONS };
  readonly outputKeyNodes = WRITE_OUTPUT;
}
export class QueryCommand extends DocumentCommand<QueryCommandInput, QueryCommandOutput> {
  readonly operation = 'Query';
  readonly inputKeyNodes = { KeyConditions: FILTER, QueryFilter: FILTER, ...PAGE_INPUT };
  readonly outputKeyNodes = PAGE_OUTPUT;
}
export class ScanCommand extends DocumentCommand<ScanCommandInput, ScanCommandOutput> {
  readonly operation = 'Scan';
  readonly inputKeyNodes = { ScanFilter: FILTER, ...PAGE_INPUT };
  readonly outputKeyNodes = PAGE_OUTPUT;
}
export class BatchGetCommand extends DocumentCommand<BatchGetCommandInput, BatchGetCommandOutput> {
  readonly operation = 'BatchGetItem';
  readonly inputKeyNodes = { RequestItems: { '*': { Keys: { '*': ALL_VALUES } } } };
  readonly outputKeyNodes = { Responses: { '*': { '*': ALL_VALUES } }, UnprocessedKeys: { '*': { Keys: { '*': ALL_VALUES } } } };
}
export class BatchWriteCommand extends DocumentCommand<BatchWriteCommandInput, BatchWriteCommandOutput> {
  readonly operation = 'BatchWriteItem';
  readonly inputKeyNodes = { RequestItems: WRITE_REQUESTS };
  readonly outputKeyNodes = { UnprocessedItems: WRITE_REQUESTS, ...METRICS_BY_TABLE };
}
export class TransactGetCommand extends DocumentCommand<TransactGetCommandInput, TransactGetCommandOutput> {
  readonly operation = 'TransactGetItems';
  readonly inputKeyNodes = { TransactItems: { '*': { Get: { Key: ALL_VALUES } } } };
  readonly outputKeyNodes = { Responses: { '*': { Item: ALL_VALUES } } };
}
export class TransactWriteCommand extends DocumentCommand<TransactWriteCommandInput, TransactWriteCommandOutput> {
  readonly operation = 'TransactWriteItems';
  readonly inputKeyNodes = {
    TransactItems: {
      '*': {
        ConditionCheck: { Key: ALL_VALUES, ExpressionAttributeValues: ALL_VALUES },
        Put: { Item: ALL_VALUES, ExpressionAttributeValues: ALL_VALUES },
        Delete: { Key: ALL_VALUES, ExpressionAttributeValues: ALL_VALUES },
        Update: { Key: ALL_VALUES, ExpressionAttributeValues: ALL_VALUES },
      },
    },
  };
  readonly outputKeyNodes = METRICS_BY_TABLE;
}

/** What DynamoDB answered with an error: its name (`ValidationException`…), whose fault, and the HTTP status and attempts. */
export class DynamoDBServiceException extends Error {
  readonly $fault: 'client' | 'server';
  readonly $metadata: { httpStatusCode?: number; attempts?: number };
  constructor(options: { name: string; message: string; $fault: 'client' | 'server'; $metadata: { httpStatusCode?: number; attempts?: number } }) {
    super(options.message);
    this.name = options.name;
    this.$fault = options.$fault;
    this.$metadata = options.$metadata;
  }
}

type ErrorOptions = { message: string; $metadata: { httpStatusCode?: number; attempts?: number } };

/** A condition did not hold; `Item` is the item as it stood (in wire format) when the request asked for it. */
export class ConditionalCheckFailedException extends DynamoDBServiceException {
  readonly Item?: Record<string, AttributeValue>;
  constructor(options: ErrorOptions & { Item?: Record<string, AttributeValue> }) {
    super({ ...options, name: 'ConditionalCheckFailedException', $fault: 'client' });
    this.Item = options.Item;
  }
}

/** A transaction was cancelled; one reason per item, in order (`Code` 'None' for the items that were fine). */
export class TransactionCanceledException extends DynamoDBServiceException {
  readonly CancellationReasons?: Array<{ Code?: string; Message?: string; Item?: Record<string, AttributeValue> }>;
  constructor(options: ErrorOptions & { CancellationReasons?: TransactionCanceledException['CancellationReasons'] }) {
    super({ ...options, name: 'TransactionCanceledException', $fault: 'client' });
    this.CancellationReasons = options.CancellationReasons;
  }
}
