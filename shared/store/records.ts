import { isoNow, type Clock } from '../clock';
import { ConditionalCheckFailedException, DeleteCommand, GetCommand, PutCommand, TransactionCanceledException, TransactWriteCommand, type TransactWriteCommandInput } from './dynamo-commands';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { ConflictError, NotFoundError, ValidationError } from '../errors';
import { backOff, CONTENDED_ATTEMPTS } from './contention';
import type { TenantScope } from '../tenancy';
import { batchOps, readPage } from './batch';
import { ifConditionHolds } from './conditional';
import type { Db } from './db';
import { keys, type RecordKind } from './keys';
import { readItem } from './item-shape';
import { recentReads } from './recent-reads';
import type { z } from 'zod';
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

/** A record kind as messages name it. */
export const NAMES: Record<RecordKind, string> = { AGENT: 'agent', KS: 'knowledge source', WORKFLOW: 'workflow', EVAL_DATASET: 'eval dataset', EVAL_RUN: 'eval run' };

/**
 * How a kind's records read: the shape the room that owns the kind declares (records are the
 * rooms' resources: an agent, a knowledge source, a workflow). Every read parses through it.
 */
export type RecordShape<T extends BaseRecord> = z.ZodType<T>;

export interface Idempotency {
  key: string;
  /** A digest of the request; the same key with another request is a conflict. */
  requestHash: string;
}

export function recordsStore(db: Db, clock: Clock) {
  /** Raw items (parsed on each use, so no caller shares an object) of records read lately, for `getRecent`. */
  const recent = recentReads<Record<string, unknown>>(1000);
  const recentKey = (scope: TenantScope, kind: RecordKind, id: string) => {
    const { pk, sk } = keys.record(scope, kind, id);
    return `${pk}\u0000${sk}`;
  };

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

  // Each kind's table is built once: its room asks for it on every request.
  const tables = new Map<RecordKind, { shape: unknown; table: unknown }>();

  /** The records of one kind, read through the shape its room declares. */
  function table<T extends BaseRecord>(kind: RecordKind, shape: RecordShape<T>): RecordTable<T> {
    const built = tables.get(kind);
    // The table was built from this very shape, so it is this shape's.
    if (built?.shape === shape) return built.table as RecordTable<T>;
    const made = buildTable(kind, shape);
    tables.set(kind, { shape, table: made });
    return made;
  }

  function buildTable<T extends BaseRecord>(kind: RecordKind, shape: RecordShape<T>): RecordTable<T> {
    const read = (item: Record<string, unknown>): T => readItem(shape, item, NAMES[kind]);
    /** Runs a write of the record, then forgets any recent read of it. */
    const writing = <R>(scope: TenantScope, id: string, write: () => Promise<R>): Promise<R> => recent.writing(recentKey(scope, kind, id), write);

    /**
     * Creates a record. With references, the write happens only if every referenced record exists;
     * with an idempotency key, a retry of the same request returns the record the first one created.
     */
    function create(scope: TenantScope, record: T, options: { references?: Reference[]; idempotency?: Idempotency } = {}): Promise<{ record: T; replayed: boolean }> {
      return writing(scope, record.id, () => put(scope, record, options));
    }

    async function put(scope: TenantScope, record: T, options: { references?: Reference[]; idempotency?: Idempotency }): Promise<{ record: T; replayed: boolean }> {
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
          const previous = failure.item ? unmarshall(failure.item) : undefined;
          if (previous?.requestHash !== idempotency.requestHash) {
            throw new ConflictError('Idempotency-Key was already used with a different request', {
              field: 'Idempotency-Key',
            });
          }
          if (previous.record) return { record: read(previous.record as Record<string, unknown>), replayed: true };
          // A key written before first answers were kept with it.
          const existing = await get(scope, String(previous.recordId));
          if (!existing) throw new NotFoundError(NAMES[kind], String(previous.recordId));
          return { record: existing, replayed: true };
        }
        throw error;
      }
    }

    async function get(scope: TenantScope, id: string): Promise<T | undefined> {
      const item = await getItem(scope, id);
      return item ? read(item) : undefined;
    }

    async function getItem(scope: TenantScope, id: string): Promise<Record<string, unknown> | undefined> {
      return (await db.client.send(new GetCommand({ TableName: db.table, Key: keys.record(scope, kind, id) }))).Item;
    }

    /**
     * The record as this instance read it within RECENT_MS (recent-reads.ts), for the hot paths
     * that may take it that old; only records `keep` accepts are kept (a search keeps a ready
     * source only, so one that just became ready is never answered as still syncing).
     */
    async function getRecent(scope: TenantScope, id: string, keep: (record: T) => boolean = () => true): Promise<T | undefined> {
      // A fresh read is parsed once, for `keep` and the answer; a kept one is parsed on each use.
      let fresh: T | undefined;
      const item = await recent.read(recentKey(scope, kind, id), () => getItem(scope, id), (raw) => keep((fresh = read(raw))));
      return item ? (fresh ?? read(item)) : undefined;
    }

    /** Newest first. Reads one item more than asked so `hasMore` is exact, not a guess. */
    async function list(scope: TenantScope, page: { limit: number; cursor?: string }): Promise<Page<T>> {
      const { items, nextCursor } = await readPage(db, keys.recordPartition(scope, kind), page, 'newest-first');
      return { items: items.map(read), nextCursor };
    }

    /** Every record whose list attribute contains a value (pages through the partition). */
    async function containing(scope: TenantScope, attribute: string, value: string): Promise<T[]> {
      const items = await batchOps(db).queryAll(keys.recordPartition(scope, kind), undefined, { expression: 'contains(#attr, :value)', names: { '#attr': attribute }, values: { ':value': value } });
      return items.map(read);
    }

    /**
     * Replaces a record if it still has `expectedVersion` (optimistic concurrency: two concurrent
     * PUTs cannot silently overwrite each other).
     */
    function replace(scope: TenantScope, record: T, expectedVersion: number, references: Reference[] = []): Promise<T> {
      return writing(scope, record.id, () => replaceItem(scope, record, expectedVersion, references));
    }

    async function replaceItem(scope: TenantScope, record: T, expectedVersion: number, references: Reference[]): Promise<T> {
      const put = {
        TableName: db.table,
        Item: { ...keys.record(scope, kind, record.id), ...record },
        ConditionExpression: 'attribute_exists(pk) AND #version = :expected',
        ExpressionAttributeNames: { '#version': 'version' },
        ExpressionAttributeValues: { ':expected': expectedVersion },
      };
      const modified = () => new ConflictError(`${NAMES[kind]} ${record.id} was modified or deleted concurrently; retry`, { id: record.id });
      try {
        if (references.length === 0) {
          await db.client.send(new PutCommand(put));
        } else {
          await db.client.send(new TransactWriteCommand({ TransactItems: [{ Put: put }, ...referenceChecks(scope, references)] }));
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
    async function update(scope: TenantScope, id: string, change: (current: T) => T, attempts = CONTENDED_ATTEMPTS): Promise<T | undefined> {
      for (let attempt = 1; ; attempt++) {
        const current = await get(scope, id);
        if (!current) return undefined;
        const next = { ...change(current), version: current.version + 1, updatedAt: isoNow(clock) };
        try {
          return await replace(scope, next, current.version);
        } catch (error) {
          if (!(error instanceof ConflictError) || attempt >= attempts) throw error;
          await backOff(attempt);
        }
      }
    }

    /** Deletes a record (at `expectedVersion`, when given); returns what was deleted, or undefined when nothing was. */
    async function remove(scope: TenantScope, id: string, expectedVersion?: number): Promise<T | undefined> {
      const out = await writing(scope, id, () => ifConditionHolds(
        db.client.send(
          new DeleteCommand({
            TableName: db.table,
            Key: keys.record(scope, kind, id),
            ...(expectedVersion === undefined
              ? { ConditionExpression: 'attribute_exists(pk)' }
              : { ConditionExpression: 'attribute_exists(pk) AND #version = :expected', ExpressionAttributeNames: { '#version': 'version' }, ExpressionAttributeValues: { ':expected': expectedVersion } }),
            ReturnValues: 'ALL_OLD',
          }),
        ),
      ));
      return out?.Attributes ? read(out.Attributes) : undefined;
    }

    return { create, get, getRecent, list, containing, replace, update, remove };
  }

  /** Whether a record exists, whatever its shape (a reference check before a read of another room's record). */
  async function exists(scope: TenantScope, kind: RecordKind, id: string): Promise<boolean> {
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.record(scope, kind, id), ProjectionExpression: 'pk' }));
    return out.Item !== undefined;
  }

  /** The 400 a create with these references would answer, checked without writing (the first that does not exist). */
  async function checkReferences(scope: TenantScope, references: Reference[]): Promise<void> {
    const found = await Promise.all(references.map((ref) => exists(scope, ref.kind, ref.id)));
    const missing = references.find((_, i) => !found[i]);
    if (missing) throw new ValidationError(missing.field, `refers to ${NAMES[missing.kind]} ${missing.id}, which does not exist`);
  }

  return { table, exists, checkReferences };
}

export type RecordsStore = ReturnType<typeof recordsStore>;
/** The records of one kind, typed by its shape. */
export interface RecordTable<T extends BaseRecord> {
  create(scope: TenantScope, record: T, options?: { references?: Reference[]; idempotency?: Idempotency }): Promise<{ record: T; replayed: boolean }>;
  get(scope: TenantScope, id: string): Promise<T | undefined>;
  /** `get`, or what this instance read within RECENT_MS (for hot paths; only records `keep` accepts are kept). */
  getRecent(scope: TenantScope, id: string, keep?: (record: T) => boolean): Promise<T | undefined>;
  list(scope: TenantScope, page: { limit: number; cursor?: string }): Promise<Page<T>>;
  containing(scope: TenantScope, attribute: string, value: string): Promise<T[]>;
  replace(scope: TenantScope, record: T, expectedVersion: number, references?: Reference[]): Promise<T>;
  update(scope: TenantScope, id: string, change: (current: T) => T, attempts?: number): Promise<T | undefined>;
  remove(scope: TenantScope, id: string, expectedVersion?: number): Promise<T | undefined>;
}
