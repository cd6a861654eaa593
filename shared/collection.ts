import { NotFoundError } from './errors';
import { isId, newId, type IdKind } from './ids';
import type { Runtime } from './runtime';
import type { BaseRecord, Idempotency, Page, RecordKind, Reference } from './store/records';
import type { TenantScope } from './tenancy';
import { isoNow } from './clock';

type Fields<T> = Omit<T, keyof BaseRecord>;

/**
 * The record life cycle every resource shares (ids, timestamps, versions, 404s), so resource
 * modules hold only what is their own.
 */
export function collection<T extends BaseRecord>(kind: RecordKind, idKind: IdKind, label: string) {
  const notFound = (id: string) => new NotFoundError(label, id);

  return {
    async create(
      rt: Runtime,
      scope: TenantScope,
      fields: Fields<T>,
      options: { references?: Reference[]; idempotency?: Idempotency } = {},
    ): Promise<{ record: T; replayed: boolean }> {
      const now = isoNow(rt.clock);
      const record = { ...fields, id: newId(idKind, rt.clock.now()), createdAt: now, updatedAt: now, version: 1 } as T;
      return rt.store.records.createRecord(scope, kind, record, options);
    },

    async get(rt: Runtime, scope: TenantScope, id: string): Promise<T> {
      // A malformed id cannot exist: answer without a read.
      const record = isId(idKind, id) ? await rt.store.records.getRecord<T>(scope, kind, id) : undefined;
      if (!record) throw notFound(id);
      return record;
    },

    list(rt: Runtime, scope: TenantScope, page: { limit: number; cursor?: string }): Promise<Page<T>> {
      return rt.store.records.listRecords<T>(scope, kind, page);
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
      return rt.store.records.replaceRecord(scope, kind, next, current.version, references);
    },

    async remove(rt: Runtime, scope: TenantScope, id: string): Promise<T> {
      const removed = isId(idKind, id) ? await rt.store.records.deleteRecord<T>(scope, kind, id) : undefined;
      if (!removed) throw notFound(id);
      return removed;
    },
  };
}
