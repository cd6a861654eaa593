import { NotFoundError } from './errors';
import { isId, newId, type IdKind } from './ids';
import type { Runtime } from './runtime';
import type { BaseRecord, Idempotency, Page, RecordKind, RecordShape, Reference } from './store/records';
import type { TenantScope } from './tenancy';
import { isoNow } from './clock';

type Fields<T> = Omit<T, keyof BaseRecord>;

/**
 * The record life cycle every resource shares (ids, timestamps, versions, 404s), so resource
 * modules hold only what is their own. `shape`: how the resource's records read (each read parses).
 */
export function collection<T extends BaseRecord>(kind: RecordKind, idKind: IdKind, label: string, shape: RecordShape<T>) {
  const notFound = (id: string) => new NotFoundError(label, id);
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
    ): Promise<T> {
      const current = await this.get(rt, scope, id);
      const next = {
        ...build(current),
        id,
        createdAt: current.createdAt,
        updatedAt: isoNow(rt.clock),
        version: current.version + 1,
      } as T;
      return records(rt).replace(scope, next, current.version, references);
    },

    async remove(rt: Runtime, scope: TenantScope, id: string): Promise<T> {
      const removed = isId(idKind, id) ? await records(rt).remove(scope, id) : undefined;
      if (!removed) throw notFound(id);
      return removed;
    },
  };
}
