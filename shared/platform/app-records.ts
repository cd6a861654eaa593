import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError, ValidationError } from '../errors';
import { newId } from '../ids';
import { applyMergePatch, isPlainObject } from '../json-objects';
import { documentClient, tableName } from '../store/client';
import { keys } from '../store/keys';
import type { TenantScope } from '../tenancy';

/** A row of the `records` table: application data the tenant owns. */
export type AppRecord = {
  collection: string;
  id: string;
  data: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  version: number;
};

/** DynamoDB items hold 400 KB; the rest is key and bookkeeping. */
const MAX_DATA_BYTES = 350 * 1024;

function checkData(data: unknown, field: string): Record<string, unknown> {
  if (!isPlainObject(data)) throw new ValidationError(field, 'must be a JSON object');
  if (Buffer.byteLength(JSON.stringify(data)) > MAX_DATA_BYTES) throw new ValidationError(field, `must be at most ${MAX_DATA_BYTES} bytes of JSON`);
  return data;
}

async function read(scope: TenantScope, collection: string, id: string): Promise<AppRecord | undefined> {
  const out = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.appRecord(scope, collection, id), ConsistentRead: true }));
  if (!out.Item) return undefined;
  const { pk: _pk, sk: _sk, ...rest } = out.Item;
  return rest as AppRecord;
}

/** Writes only if the row is still as read (absent, or at `version`): concurrent writers never lose an update silently. */
async function write(scope: TenantScope, record: AppRecord, previousVersion: number | undefined): Promise<AppRecord> {
  try {
    await documentClient().send(
      new PutCommand({
        TableName: tableName(),
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

/** Creates the record, or replaces its data when the id exists (createdAt kept, version + 1). */
export async function putAppRecord(scope: TenantScope, item: Record<string, unknown>): Promise<AppRecord> {
  const collection = item.collection;
  if (typeof collection !== 'string') throw new ValidationError('item.collection', 'is required');
  const id = typeof item.id === 'string' ? item.id : newId('record');
  const data = checkData(item.data, 'item.data');
  const now = new Date().toISOString();
  const current = typeof item.id === 'string' ? await read(scope, collection, id) : undefined;
  return write(scope, { collection, id, data, createdAt: current?.createdAt ?? now, updatedAt: now, version: (current?.version ?? 0) + 1 }, current?.version);
}

/** Shallow-merges `data` (a null value removes that field). */
export async function updateAppRecord(scope: TenantScope, collection: string, id: string, changes: Record<string, unknown>): Promise<AppRecord | undefined> {
  const current = await read(scope, collection, id);
  if (!current) return undefined;
  const data = checkData(applyMergePatch(current.data, checkData(changes.data, 'item.data')), 'item.data');
  return write(scope, { ...current, data, updatedAt: new Date().toISOString(), version: current.version + 1 }, current.version);
}

export async function deleteAppRecord(scope: TenantScope, collection: string, id: string): Promise<boolean> {
  const out = await documentClient().send(new DeleteCommand({ TableName: tableName(), Key: keys.appRecord(scope, collection, id), ReturnValues: 'ALL_OLD' }));
  return out.Attributes !== undefined;
}
