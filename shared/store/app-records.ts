import { ConditionalCheckFailedException, DeleteCommand, GetCommand, PutCommand } from './dynamo-commands';
import { ConflictError } from '../errors';
import type { TenantScope } from '../tenancy';
import type { Db } from './db';
import { keys } from './keys';

/** A row of the `records` table: application data the tenant owns. */
export type AppRecord = {
  collection: string;
  id: string;
  data: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  version: number;
};

export function appRecordsStore(db: Db) {
  async function readAppRecord(scope: TenantScope, collection: string, id: string): Promise<AppRecord | undefined> {
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.appRecord(scope, collection, id), ConsistentRead: true }));
    if (!out.Item) return undefined;
    const { pk: _pk, sk: _sk, ...rest } = out.Item;
    return rest as AppRecord;
  }

  /** Writes only if the row is still as read (absent, or at `version`): concurrent writers never lose an update silently. */
  async function writeAppRecord(scope: TenantScope, record: AppRecord, previousVersion: number | undefined): Promise<AppRecord> {
    try {
      await db.client.send(
        new PutCommand({
          TableName: db.table,
          Item: { ...keys.appRecord(scope, record.collection, record.id), ...record },
          ...(previousVersion === undefined
            ? { ConditionExpression: 'attribute_not_exists(pk)' }
            : { ConditionExpression: '#v = :v', ExpressionAttributeNames: { '#v': 'version' }, ExpressionAttributeValues: { ':v': previousVersion } }),
        }),
      );
      return record;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) throw new ConflictError(`record ${record.id} was modified concurrently; retry`, { id: record.id });
      throw error;
    }
  }

  async function deleteAppRecord(scope: TenantScope, collection: string, id: string): Promise<boolean> {
    const out = await db.client.send(new DeleteCommand({ TableName: db.table, Key: keys.appRecord(scope, collection, id), ReturnValues: 'ALL_OLD' }));
    return out.Attributes !== undefined;
  }

  return { readAppRecord, writeAppRecord, deleteAppRecord };
}

export type AppRecordsStore = ReturnType<typeof appRecordsStore>;
