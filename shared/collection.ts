import { AppError, ConflictError, NotFoundError } from './errors';
import { isId, newId, type IdKind } from './ids';
import type { Runtime } from './runtime';
import type { BaseRecord, Idempotency, Page, RecordKind, RecordShape, Reference } from './store/records';
import type { TenantScope } from './tenancy';
import { isoNow } from './clock';

type Fields<T> = Omit<T, keyof BaseRecord>;

/**
 * A write's condition from the request (`If-Match`): the record must still be at one of these
 * versions, else the write is refused with a 412 and nothing changes.
 */
export interface Precondition {
  versions: number[];
}

/**
 * The record life cycle every resource shares (ids, timestamps, versions, 404s), so resource
 * modules hold only what is their own. `shape`: how the resource's records read (each read parses).
 */
export function collection<T extends BaseRecord>(kind: RecordKind, idKind: IdKind, label: string, shape: RecordShape<T>) {
  const notFound = (id: string) => new NotFoundError(label, id);
  const preconditionFailed = (id: string, version: number) =>
    new AppError('PRECONDITION_FAILED', `${label} ${id} is at version ${version}, not one If-Match names: read it again and reapply the change`, { currentVersion: version, etag: `"${version}"` });
  const holds = (precondition: Precondition | undefined, record: T) => !precondition || precondition.versions.includes(record.version);
  const records = (rt: Runtime) => rt.store.records.table(kind, shape);

  return {
    async create(
      rt: Runtime,
      scope: TenantScope,
      fields: Fields<T>,
      options: { references?: Reference[]; idempotency?: Idempotency } = {},
    ): Promise<{ record: T; replayed: boolean }> {
      const now = isoNow(rt.clock);
      const record = { ...fields, id: newId(idKind, rt.clock.now()), createdAt: now, updatedAt: now, version: 1 } as T;
      return records(rt).create(scope, record, options);
    },

    /** The record, or undefined when there is none (a malformed id cannot exist: answered without a read). */
    async find(rt: Runtime, scope: TenantScope, id: string): Promise<T | undefined> {
      return isId(idKind, id) ? records(rt).get(scope, id) : undefined;
    },

    async get(rt: Runtime, scope: TenantScope, id: string): Promise<T> {
      const record = await this.find(rt, scope, id);
      if (!record) throw notFound(id);
      return record;
    },

    /** `find` for the hot paths that may take a read this instance made within a second (records' `getRecent`). */
    async findRecent(rt: Runtime, scope: TenantScope, id: string, keep?: (record: T) => boolean): Promise<T | undefined> {
      return isId(idKind, id) ? records(rt).getRecent(scope, id, keep) : undefined;
    },

    /** `get` for those hot paths. */
    async getRecent(rt: Runtime, scope: TenantScope, id: string, keep?: (record: T) => boolean): Promise<T> {
      const record = await this.findRecent(rt, scope, id, keep);
      if (!record) throw notFound(id);
      return record;
    },

    list(rt: Runtime, scope: TenantScope, page: { limit: number; cursor?: string }): Promise<Page<T>> {
      return records(rt).list(scope, page);
    },

    /** Every record whose list attribute contains a value. */
    containing(rt: Runtime, scope: TenantScope, attribute: keyof T & string, value: string): Promise<T[]> {
      return records(rt).containing(scope, attribute, value);
    },

    /** Applies `change` to a record (retried on concurrent writes); undefined when it does not exist. */
    update(rt: Runtime, scope: TenantScope, id: string, change: (current: T) => T): Promise<T | undefined> {
      return records(rt).update(scope, id, change);
    },

    /** Replaces the resource's own fields; `build` sees the current record to keep server state. */
    async replace(
      rt: Runtime,
      scope: TenantScope,
      id: string,
      build: (current: T) => Fields<T>,
      references: Reference[] = [],
      precondition?: Precondition,
    ): Promise<T> {
      const current = await this.get(rt, scope, id);
      if (!holds(precondition, current)) throw preconditionFailed(id, current.version);
      const next = {
        ...build(current),
        id,
        createdAt: current.createdAt,
        updatedAt: isoNow(rt.clock),
        version: current.version + 1,
      } as T;
      try {
        return await records(rt).replace(scope, next, current.version, references);
      } catch (error) {
        // Written by someone else since it was read: with If-Match, that is the caller's 412.
        if (precondition && error instanceof ConflictError) throw preconditionFailed(id, (await this.get(rt, scope, id)).version);
        throw error;
      }
    },

    /** Deletes a record (only at a version the precondition names, when one is given). */
    async remove(rt: Runtime, scope: TenantScope, id: string, precondition?: Precondition): Promise<T> {
      if (!isId(idKind, id)) throw notFound(id);
      const current = precondition ? await this.get(rt, scope, id) : undefined;
      if (current && !holds(precondition, current)) throw preconditionFailed(id, current.version);
      const removed = await records(rt).remove(scope, id, current?.version);
      if (!removed) {
        const now = current ? await this.find(rt, scope, id) : undefined;
        if (now) throw preconditionFailed(id, now.version);
        throw notFound(id);
      }
      return removed;
    },
  };
}
