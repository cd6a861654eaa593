import { isoNow, type Clock } from '../clock';
import {
  ConditionalCheckFailedException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { ConflictError, NotFoundError, ValidationError } from '../errors';
import type { TenantScope } from '../tenancy';
import { readPage } from './batch';
import { ifConditionHolds } from './conditional';
import type { Db } from './db';
import { keys, type RecordKind } from './keys';
export type { RecordKind };

/** Fields every record has; the rest is the resource's own. */
export interface BaseRecord {
  id: string;
  createdAt: string;
  updatedAt: string;
  version: number;
}

/** Another record this write relies on; checked atomically with the write. */
export interface Reference {
  kind: RecordKind;
  id: string;
  /** The request field that named it, for the 400 if it does not exist. */
  field: string;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;

const NAMES: Record<RecordKind, string> = { AGENT: 'agent', KS: 'knowledge source', WORKFLOW: 'workflow' };

function strip<T>(item: Record<string, unknown> | undefined): T | undefined {
  if (!item) return undefined;
  const { pk: _pk, sk: _sk, ...rest } = item;
  return rest as T;
}

export interface Idempotency {
  key: string;
  /** A digest of the request; the same key with another request is a conflict. */
  requestHash: string;
}

export function recordsStore(db: Db, clock: Clock) {
  function referenceChecks(scope: TenantScope, references: Reference[]) {
    return references.map((ref) => ({
      ConditionCheck: {
        TableName: db.table,
        Key: keys.record(scope, ref.kind, ref.id),
        ConditionExpression: 'attribute_exists(pk)',
      },
    }));
  }

  /** Translates a cancelled transaction into the error of the first condition that failed. */
  function failedCondition(error: TransactionCanceledException, references: Reference[], offset: number) {
    const reasons = error.CancellationReasons ?? [];
    for (let i = 0; i < reasons.length; i++) {
      if (reasons[i]?.Code !== 'ConditionalCheckFailed') continue;
      const ref = references[i - offset];
      if (ref) return new ValidationError(ref.field, `refers to ${NAMES[ref.kind]} ${ref.id}, which does not exist`);
      return { index: i, item: reasons[i]?.Item };
    }
    return error;
  }

  /**
   * Creates a record. With references, the write happens only if every referenced record exists;
   * with an idempotency key, a retry of the same request returns the record the first one created.
   */
  async function createRecord<T extends BaseRecord>(
    scope: TenantScope,
    kind: RecordKind,
    record: T,
    options: { references?: Reference[]; idempotency?: Idempotency } = {},
  ): Promise<{ record: T; replayed: boolean }> {
    const references = options.references ?? [];
    const put = {
      TableName: db.table,
      Item: { ...keys.record(scope, kind, record.id), ...record },
      ConditionExpression: 'attribute_not_exists(pk)',
    };
    if (references.length === 0 && !options.idempotency) {
      await db.client.send(new PutCommand(put));
      return { record, replayed: false };
    }
    const items: NonNullable<TransactWriteCommandInput['TransactItems']> = [{ Put: put }];
    const { idempotency } = options;
    if (idempotency) {
      items.push({
        Put: {
          TableName: db.table,
          Item: {
            ...keys.idempotency(scope, kind, idempotency.key),
            recordId: record.id,
            requestHash: idempotency.requestHash,
            // The first answer itself, so a retry gets it even after the record was changed or deleted.
            record,
            expiresAt: Math.floor(clock.now() / 1000) + IDEMPOTENCY_TTL_SECONDS,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      });
    }
    const offset = items.length;
    items.push(...referenceChecks(scope, references));
    try {
      await db.client.send(new TransactWriteCommand({ TransactItems: items }));
      return { record, replayed: false };
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const failure = failedCondition(error, references, offset);
      if (failure instanceof Error) throw failure;
      if (idempotency && failure.index === 1) {
        // Cancellation reasons carry the item in wire format.
        const previous = failure.item ? (unmarshall(failure.item) as { recordId?: string; requestHash?: string; record?: T }) : undefined;
        if (previous?.requestHash !== idempotency.requestHash) {
          throw new ConflictError('Idempotency-Key was already used with a different request', {
            field: 'Idempotency-Key',
          });
        }
        if (previous.record) return { record: previous.record, replayed: true };
        // A key written before first answers were kept with it.
        const existing = await getRecord<T>(scope, kind, String(previous.recordId));
        if (!existing) throw new NotFoundError(NAMES[kind], String(previous.recordId));
        return { record: existing, replayed: true };
      }
      throw error;
    }
  }

  async function getRecord<T>(scope: TenantScope, kind: RecordKind, id: string): Promise<T | undefined> {
    const out = await db.client.send(
      new GetCommand({ TableName: db.table, Key: keys.record(scope, kind, id) }),
    );
    return strip<T>(out.Item);
  }

  /** Newest first. Reads one item more than asked so `hasMore` is exact, not a guess. */
  async function listRecords<T>(
    scope: TenantScope,
    kind: RecordKind,
    page: { limit: number; cursor?: string },
  ): Promise<Page<T>> {
    const { items, nextCursor } = await readPage(db, keys.recordPartition(scope, kind), page, 'newest-first');
    return { items: items.map((item) => strip<T>(item)!), nextCursor };
  }

  /** Every record of a kind whose list attribute contains a value (pages through the partition). */
  async function recordsContaining<T>(
    scope: TenantScope,
    kind: RecordKind,
    attribute: string,
    value: string,
  ): Promise<T[]> {
    const found: T[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await db.client.send(
        new QueryCommand({
          TableName: db.table,
          KeyConditionExpression: 'pk = :pk',
          FilterExpression: 'contains(#attr, :value)',
          ExpressionAttributeNames: { '#attr': attribute },
          ExpressionAttributeValues: { ':pk': keys.recordPartition(scope, kind), ':value': value },
          ExclusiveStartKey: start,
        }),
      );
      for (const item of out.Items ?? []) found.push(strip<T>(item)!);
      start = out.LastEvaluatedKey;
    } while (start);
    return found;
  }

  /**
   * Replaces a record if it still has `expectedVersion` (optimistic concurrency: two concurrent
   * PUTs cannot silently overwrite each other).
   */
  async function replaceRecord<T extends BaseRecord>(
    scope: TenantScope,
    kind: RecordKind,
    record: T,
    expectedVersion: number,
    references: Reference[] = [],
  ): Promise<T> {
    const put = {
      TableName: db.table,
      Item: { ...keys.record(scope, kind, record.id), ...record },
      ConditionExpression: 'attribute_exists(pk) AND #version = :expected',
      ExpressionAttributeNames: { '#version': 'version' },
      ExpressionAttributeValues: { ':expected': expectedVersion },
    };
    const modified = () =>
      new ConflictError(`${NAMES[kind]} ${record.id} was modified or deleted concurrently; retry`, {
        id: record.id,
      });
    try {
      if (references.length === 0) {
        await db.client.send(new PutCommand(put));
      } else {
        await db.client.send(
          new TransactWriteCommand({ TransactItems: [{ Put: put }, ...referenceChecks(scope, references)] }),
        );
      }
      return record;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) throw modified();
      if (error instanceof TransactionCanceledException) {
        const failure = failedCondition(error, references, 1);
        throw failure instanceof Error ? failure : modified();
      }
      throw error;
    }
  }

  /** Applies `change` to a record, re-reading and retrying when another writer got there first. */
  async function updateRecord<T extends BaseRecord>(
    scope: TenantScope,
    kind: RecordKind,
    id: string,
    change: (current: T) => T,
    attempts = 5,
  ): Promise<T | undefined> {
    for (let attempt = 1; ; attempt++) {
      const current = await getRecord<T>(scope, kind, id);
      if (!current) return undefined;
      const next = { ...change(current), version: current.version + 1, updatedAt: isoNow(clock) };
      try {
        return await replaceRecord(scope, kind, next, current.version);
      } catch (error) {
        if (!(error instanceof ConflictError) || attempt >= attempts) throw error;
      }
    }
  }

  /** Deletes a record; returns what was deleted, or undefined when there was nothing. */
  async function deleteRecord<T>(scope: TenantScope, kind: RecordKind, id: string): Promise<T | undefined> {
    const out = await ifConditionHolds(
      db.client.send(
        new DeleteCommand({
          TableName: db.table,
          Key: keys.record(scope, kind, id),
          ConditionExpression: 'attribute_exists(pk)',
          ReturnValues: 'ALL_OLD',
        }),
      ),
    );
    return out && strip<T>(out.Attributes);
  }
  return { createRecord, getRecord, listRecords, recordsContaining, replaceRecord, updateRecord, deleteRecord };
}

export type RecordsStore = ReturnType<typeof recordsStore>;
