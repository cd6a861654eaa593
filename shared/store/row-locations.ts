import type { TenantScope } from '../tenancy';
import { keys, type MemoryKind, type RecordKind } from './keys';

/** A partition, and the sort-key prefix that narrows a read of it. */
export interface Location {
  pk: string;
  skPrefix?: string;
}

/**
 * Where the platform's logical tables (`POST /platform/db/ops`) find their rows, and what a row's
 * key says of it: the platform reads partitions directly, but the formats of keys stay the store's.
 */
export const rowLocations = {
  records: (scope: TenantScope, kind: RecordKind): Location => ({ pk: keys.recordPartition(scope, kind) }),
  documents: (scope: TenantScope, sourceId: string): Location => ({ pk: keys.documentPartition(scope, sourceId) }),
  sourceOfDocument: (pk: string) => keys.parseSourcePartition(pk),
  sessions: (scope: TenantScope, agentId?: string): Location => ({
    pk: keys.sessionIndexPartition(scope),
    ...(agentId !== undefined ? { skPrefix: keys.sessionIndexPrefix(agentId) } : {}),
  }),
  sessionSortKey: (scope: TenantScope, agentId: string, sessionId: string) => keys.sessionIndex(scope, agentId, sessionId).sk,
  messages: (scope: TenantScope, agentId: string, sessionId: string): Location => ({ pk: keys.sessionPartition(scope, agentId, sessionId) }),
  sessionOfMessage: (pk: string) => keys.parseSessionPartition(pk),
  memory: (scope: TenantScope, userKey: string, kind: MemoryKind, agentId?: string): Location => ({
    pk: keys.memoryPartition(scope, userKey),
    ...(agentId !== undefined ? { skPrefix: keys.memoryPrefix(agentId, kind) } : {}),
  }),
  memorySortKey: (scope: TenantScope, userKey: string, agentId: string, kind: MemoryKind, id: string) => keys.memoryItem(scope, userKey, agentId, kind, id).sk,
  appRecords: (scope: TenantScope, collection: string): Location => ({ pk: keys.appRecordPartition(scope, collection) }),
  executions: (scope: TenantScope, workflowId: string): Location => ({ pk: keys.executionPartition(scope, workflowId) }),
};
