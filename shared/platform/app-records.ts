import { ValidationError } from '../errors';
import { newId } from '../ids';
import { applyMergePatch, isPlainObject } from '../json-objects';
import type { Runtime } from '../runtime';
import type { AppRecord } from '../store/app-records';
import type { TenantScope } from '../tenancy';
import { isoNow } from '../clock';

/** DynamoDB items hold 400 KB; the rest is key and bookkeeping. */
const MAX_DATA_BYTES = 350 * 1024;

function checkData(data: unknown, field: string): Record<string, unknown> {
  if (!isPlainObject(data)) throw new ValidationError(field, 'must be a JSON object');
  if (Buffer.byteLength(JSON.stringify(data)) > MAX_DATA_BYTES) throw new ValidationError(field, `must be at most ${MAX_DATA_BYTES} bytes of JSON`);
  return data;
}

/** Creates the record, or replaces its data when the id exists (createdAt kept, version + 1). */
export async function putAppRecord(rt: Runtime, scope: TenantScope, item: Record<string, unknown>): Promise<AppRecord> {
  const collection = item.collection;
  if (typeof collection !== 'string') throw new ValidationError('item.collection', 'is required');
  const id = typeof item.id === 'string' ? item.id : newId('record', rt.clock.now());
  const data = checkData(item.data, 'item.data');
  const now = isoNow(rt.clock);
  const current = typeof item.id === 'string' ? await rt.store.appRecords.readAppRecord(scope, collection, id) : undefined;
  return rt.store.appRecords.writeAppRecord(scope, { collection, id, data, createdAt: current?.createdAt ?? now, updatedAt: now, version: (current?.version ?? 0) + 1 }, current?.version);
}

/** Shallow-merges `data` (a null value removes that field). */
export async function updateAppRecord(rt: Runtime, scope: TenantScope, collection: string, id: string, changes: Record<string, unknown>): Promise<AppRecord | undefined> {
  const current = await rt.store.appRecords.readAppRecord(scope, collection, id);
  if (!current) return undefined;
  const data = checkData(applyMergePatch(current.data, checkData(changes.data, 'item.data')), 'item.data');
  return rt.store.appRecords.writeAppRecord(scope, { ...current, data, updatedAt: isoNow(rt.clock), version: current.version + 1 }, current.version);
}
