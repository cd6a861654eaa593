import { GetCommand, PutCommand, QueryCommand, TransactionCanceledException, TransactWriteCommand, type TransactWriteCommandInput } from './dynamo-commands';
import { z } from 'zod';
import { isoNow, type Clock } from '../clock';
import { ConflictError, NotFoundError, ValidationError } from '../errors';
import type { TenantScope } from '../tenancy';
import { batchOps, deleteRequest, readPage } from './batch';
import { backOff, CONTENDED_ATTEMPTS } from './contention';
import type { Db } from './db';
import { readItem } from './item-shape';
import { keys, type RecordKind } from './keys';
import { NAMES } from './records';

/**
 * Releases of a resource (an agent, a workflow): immutable numbered versions, each a snapshot of
 * the resource as it was, and named aliases routing to versions by weight. One partition per
 * resource: a head item (the last number given, how many versions are kept), `V#<n>` versions and
 * `A#<name>` aliases. A version knows the aliases routing to it (`routedBy`), written in the same
 * transaction as the alias, so it cannot be deleted while one does.
 */

/** One entry of an alias's routing: a version and its share of new sessions (weights sum to 100). */
export interface Route {
  version: number;
  weight: number;
}

const routeShape = z.lazy(() => z.object({ version: z.number(), weight: z.number() }));
const aliasShape = z.lazy(() => z.object({ name: z.string(), routing: z.array(routeShape), revision: z.number(), createdAt: z.string(), updatedAt: z.string() }));
export type AliasRecord = z.infer<typeof aliasShape>;
const headShape = z.lazy(() => z.object({ latest: z.number(), count: z.number() }));

export interface VersionRecord<S> {
  version: number;
  description: string;
  createdAt: string;
  snapshot: S;
  /** Aliases that route to this version. */
  routedBy: string[];
}

const versionKey = (n: number) => `V#${String(n).padStart(6, '0')}`;
const aliasKey = (name: string) => `A#${name}`;
const HEAD = 'HEAD';


export function releasesStore(db: Db, clock: Clock) {
  const { batchWrite, queryAll } = batchOps(db);

  /** The releases of resources of one kind, their snapshots read through the room's shape. */
  function of<S>(kind: RecordKind, snapshotShape: z.ZodType<S>) {
    const label = NAMES[kind];
    const partition = (scope: TenantScope, id: string) => keys.releasePartition(scope, kind, id);
    const versionShape = z.object({ version: z.number(), description: z.string(), createdAt: z.string(), snapshot: snapshotShape, routedBy: z.unknown().optional() });
    const readVersion = (item: Record<string, unknown>): VersionRecord<S> => {
      const v = readItem(versionShape, item, `${label} version`);
      // A string set comes back as a Set; absent once its last member is deleted.
      return { version: v.version, description: v.description, createdAt: v.createdAt, snapshot: v.snapshot, routedBy: v.routedBy instanceof Set ? [...(v.routedBy as Set<string>)].sort() : [] };
    };
    const readAlias = (item: Record<string, unknown>) => readItem(aliasShape, item, `${label} alias`);

    /**
     * Snapshots a resource as its next version. The head's number is taken under a condition, so
     * two publishes at once get two numbers; past `max` kept versions it is a 409.
     */
    async function publish(scope: TenantScope, id: string, snapshot: S, description: string, max: number): Promise<VersionRecord<S>> {
      const pk = partition(scope, id);
      for (let attempt = 1; ; attempt++) {
        const out = await db.client.send(new GetCommand({ TableName: db.table, Key: { pk, sk: HEAD }, ConsistentRead: true }));
        const head = out.Item ? readItem(headShape, out.Item, `${label} versions`) : undefined;
        if (head && head.count >= max) throw new ConflictError(`${label} ${id} has ${head.count} versions, the most kept: delete old versions before publishing another`, { limit: max });
        const record: VersionRecord<S> = { version: (head?.latest ?? 0) + 1, description, createdAt: isoNow(clock), snapshot, routedBy: [] };
        const { routedBy: _none, ...stored } = record;
        try {
          await db.client.send(
            new TransactWriteCommand({
              TransactItems: [
                {
                  Put: {
                    TableName: db.table,
                    Item: { pk, sk: HEAD, latest: record.version, count: (head?.count ?? 0) + 1 },
                    ...(head ? { ConditionExpression: 'latest = :latest', ExpressionAttributeValues: { ':latest': head.latest } } : { ConditionExpression: 'attribute_not_exists(pk)' }),
                  },
                },
                { Put: { TableName: db.table, Item: { pk, sk: versionKey(record.version), ...stored }, ConditionExpression: 'attribute_not_exists(pk)' } },
              ],
            }),
          );
          return record;
        } catch (error) {
          if (!(error instanceof TransactionCanceledException)) throw error;
          // Another publish took this number first.
          if (attempt >= CONTENDED_ATTEMPTS) throw new ConflictError(`${label} ${id} is being published by many requests at once: retry this one`);
          await backOff(attempt);
        }
      }
    }

    async function getVersion(scope: TenantScope, id: string, version: number): Promise<VersionRecord<S> | undefined> {
      const out = await db.client.send(new GetCommand({ TableName: db.table, Key: { pk: partition(scope, id), sk: versionKey(version) } }));
      return out.Item ? readVersion(out.Item) : undefined;
    }

    /** Newest first, in pages. */
    async function listVersions(scope: TenantScope, id: string, page: { limit: number; cursor?: string }) {
      const { items, nextCursor } = await readPage(db, partition(scope, id), page, 'newest-first', 'V#');
      return { items: items.map(readVersion), nextCursor };
    }

    /** Deletes a version no alias routes to: 404 when there is none, 409 naming the aliases that route to it. */
    async function removeVersion(scope: TenantScope, id: string, version: number): Promise<void> {
      const pk = partition(scope, id);
      try {
        await db.client.send(
          new TransactWriteCommand({
            TransactItems: [
              { Delete: { TableName: db.table, Key: { pk, sk: versionKey(version) }, ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(routedBy)' } },
              { Update: { TableName: db.table, Key: { pk, sk: HEAD }, UpdateExpression: 'ADD #count :minus', ExpressionAttributeNames: { '#count': 'count' }, ExpressionAttributeValues: { ':minus': -1 } } },
            ],
          }),
        );
      } catch (error) {
        if (!(error instanceof TransactionCanceledException)) throw error;
        const current = await getVersion(scope, id, version);
        if (!current) throw new NotFoundError(`${label} version`, `${id}:${version}`);
        if (current.routedBy.length > 0) {
          throw new ConflictError(`Version ${version} of ${label} ${id} is routed to by alias ${current.routedBy.join(', ')}: move or delete the alias first`, { aliases: current.routedBy });
        }
        throw error;
      }
    }

    async function getAlias(scope: TenantScope, id: string, name: string): Promise<AliasRecord | undefined> {
      const out = await db.client.send(new GetCommand({ TableName: db.table, Key: { pk: partition(scope, id), sk: aliasKey(name) } }));
      return out.Item ? readAlias(out.Item) : undefined;
    }

    async function listAliases(scope: TenantScope, id: string): Promise<AliasRecord[]> {
      const out = await db.client.send(
        new QueryCommand({ TableName: db.table, KeyConditionExpression: 'pk = :pk AND begins_with(sk, :a)', ExpressionAttributeValues: { ':pk': partition(scope, id), ':a': 'A#' } }),
      );
      return (out.Items ?? []).map(readAlias);
    }

    /**
     * Creates or moves an alias in one transaction: the alias, and on each version it now routes to
     * (which must exist) and each it no longer routes to, the version's record of it. A concurrent
     * move of the same alias is retried on what it left.
     */
    async function putAlias(scope: TenantScope, id: string, name: string, routing: Route[]): Promise<AliasRecord> {
      const pk = partition(scope, id);
      for (let attempt = 1; ; attempt++) {
        const current = await getAlias(scope, id, name);
        const now = isoNow(clock);
        const alias: AliasRecord = { name, routing, revision: (current?.revision ?? 0) + 1, createdAt: current?.createdAt ?? now, updatedAt: now };
        const targets = [...new Set(routing.map((r) => r.version))];
        const dropped = [...new Set((current?.routing ?? []).map((r) => r.version))].filter((v) => !targets.includes(v));
        const items: NonNullable<TransactWriteCommandInput['TransactItems']> = [
          {
            Put: {
              TableName: db.table,
              Item: { pk, sk: aliasKey(name), ...alias },
              ...(current ? { ConditionExpression: 'revision = :revision', ExpressionAttributeValues: { ':revision': current.revision } } : { ConditionExpression: 'attribute_not_exists(pk)' }),
            },
          },
          ...targets.map((version) => ({
            Update: {
              TableName: db.table,
              Key: { pk, sk: versionKey(version) },
              UpdateExpression: 'ADD routedBy :name',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeValues: { ':name': new Set([name]) },
            },
          })),
          ...dropped.map((version) => ({
            Update: {
              TableName: db.table,
              Key: { pk, sk: versionKey(version) },
              UpdateExpression: 'DELETE routedBy :name',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeValues: { ':name': new Set([name]) },
            },
          })),
        ];
        try {
          await db.client.send(new TransactWriteCommand({ TransactItems: items }));
          return alias;
        } catch (error) {
          if (!(error instanceof TransactionCanceledException)) throw error;
          const reasons = error.CancellationReasons ?? [];
          const missing = targets.findIndex((_, i) => reasons[i + 1]?.Code === 'ConditionalCheckFailed');
          if (missing >= 0) {
            const index = routing.findIndex((r) => r.version === targets[missing]);
            throw new ValidationError(`routing[${index}].version`, `is ${targets[missing]}, which is not a version of ${label} ${id}`);
          }
          if (attempt >= 5) throw new ConflictError(`Alias ${name} of ${label} ${id} was moved concurrently; retry`);
        }
      }
    }

    /** Deletes an alias, and the versions' record of it; false when there was none. */
    async function removeAlias(scope: TenantScope, id: string, name: string): Promise<boolean> {
      const pk = partition(scope, id);
      for (let attempt = 1; ; attempt++) {
        const current = await getAlias(scope, id, name);
        if (!current) return false;
        try {
          await db.client.send(
            new TransactWriteCommand({
              TransactItems: [
                { Delete: { TableName: db.table, Key: { pk, sk: aliasKey(name) }, ConditionExpression: 'revision = :revision', ExpressionAttributeValues: { ':revision': current.revision } } },
                ...[...new Set(current.routing.map((r) => r.version))].map((version) => ({
                  Update: { TableName: db.table, Key: { pk, sk: versionKey(version) }, UpdateExpression: 'DELETE routedBy :name', ExpressionAttributeValues: { ':name': new Set([name]) } },
                })),
              ],
            }),
          );
          return true;
        } catch (error) {
          if (!(error instanceof TransactionCanceledException)) throw error;
          // Another publish took this number first.
          if (attempt >= CONTENDED_ATTEMPTS) throw new ConflictError(`${label} ${id} is being published by many requests at once: retry this one`);
          await backOff(attempt);
        }
      }
    }

    /** Every version, oldest first (an export takes them all). */
    async function allVersions(scope: TenantScope, id: string): Promise<VersionRecord<S>[]> {
      return (await queryAll(partition(scope, id), 'V#')).map(readVersion);
    }

    /**
     * Writes versions under the numbers they had elsewhere (an import): the resource is new, so
     * nothing else writes its partition; the head then gives the next publish the number after the
     * highest. Aliases follow with `putAlias`, which records them on their versions.
     */
    async function restoreVersions(scope: TenantScope, id: string, versions: Array<Omit<VersionRecord<S>, 'routedBy'>>): Promise<void> {
      const pk = partition(scope, id);
      await batchWrite(versions.map((v) => ({ PutRequest: { Item: { pk, sk: versionKey(v.version), version: v.version, description: v.description, createdAt: v.createdAt, snapshot: v.snapshot } } })));
      const latest = Math.max(0, ...versions.map((v) => v.version));
      await db.client.send(new PutCommand({ TableName: db.table, Item: { pk, sk: HEAD, latest, count: versions.length }, ConditionExpression: 'attribute_not_exists(pk)' }));
    }

    /** Every version and alias of a resource (its deletion takes them along). */
    async function removeAll(scope: TenantScope, id: string): Promise<void> {
      const pk = partition(scope, id);
      const items = await queryAll(pk);
      await batchWrite(items.map((item) => deleteRequest({ pk, sk: String(item.sk) })));
    }

    return { publish, getVersion, listVersions, allVersions, restoreVersions, removeVersion, getAlias, listAliases, putAlias, removeAlias, removeAll };
  }

  return { of };
}

export type ReleasesStore = ReturnType<typeof releasesStore>;
