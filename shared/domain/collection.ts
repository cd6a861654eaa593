import { NotFoundError } from '../errors';
import { isId, newId, type IdKind } from '../ids';
import type { RecordKind } from '../store/keys';
import {
  createRecord,
  deleteRecord,
  getRecord,
  listRecords,
  replaceRecord,
  type BaseRecord,
  type Idempotency,
  type Page,
  type Reference,
} from '../store/records';
import type { TenantScope } from '../tenancy';

type Fields<T> = Omit<T, keyof BaseRecord>;

/**
 * The record life cycle every resource shares (ids, timestamps, versions, 404s), so resource
 * modules hold only what is their own.
 */
export function collection<T extends BaseRecord>(kind: RecordKind, idKind: IdKind, label: string) {
  const notFound = (id: string) => new NotFoundError(label, id);

  return {
    async create(
      scope: TenantScope,
      fields: Fields<T>,
      options: { references?: Reference[]; idempotency?: Idempotency } = {},
    ): Promise<{ record: T; replayed: boolean }> {
      const now = new Date().toISOString();
      const record = { ...fields, id: newId(idKind), createdAt: now, updatedAt: now, version: 1 } as T;
      return createRecord(scope, kind, record, options);
    },

    async get(scope: TenantScope, id: string): Promise<T> {
      // A malformed id cannot exist: answer without a read.
      const record = isId(idKind, id) ? await getRecord<T>(scope, kind, id) : undefined;
      if (!record) throw notFound(id);
      return record;
    },

    list(scope: TenantScope, page: { limit: number; cursor?: string }): Promise<Page<T>> {
      return listRecords<T>(scope, kind, page);
    },

    /** Replaces the resource's own fields; `build` sees the current record to keep server state. */
    async replace(
      scope: TenantScope,
      id: string,
      build: (current: T) => Fields<T>,
      references: Reference[] = [],
    ): Promise<T> {
      const current = await this.get(scope, id);
      const next = {
        ...build(current),
        id,
        createdAt: current.createdAt,
        updatedAt: new Date().toISOString(),
        version: current.version + 1,
      } as T;
      return replaceRecord(scope, kind, next, current.version, references);
    },

    async remove(scope: TenantScope, id: string): Promise<T> {
      const removed = isId(idKind, id) ? await deleteRecord<T>(scope, kind, id) : undefined;
      if (!removed) throw notFound(id);
      return removed;
    },
  };
}
