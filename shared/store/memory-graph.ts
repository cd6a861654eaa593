import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { deleteRequest, putRequest, batchOps } from './batch';
import type { Db } from './db';
import { keys } from './keys';
import type { TenantScope } from '../tenancy';

/** Memory items as stored (and as the memory_* tables of db/ops show them). */
export interface MemoryNode {
  kind: 'node';
  id: string;
  agentId: string;
  userId: string | null;
  sessionId: string | null;
  type: string;
  label: string;
  norm: string;
  mentions: number;
  createdAt: string;
  lastSeenAt: string;
}

export interface MemoryEdge {
  kind: 'edge';
  id: string;
  agentId: string;
  userId: string | null;
  sessionId: string | null;
  from: string;
  to: string;
  toLabel: string;
  relation: string;
  fact: string;
  /** When the fact became true / stopped being true (world time). */
  validAt: string;
  invalidAt: string | null;
  /** When Cairn learnt it / when it was superseded (system time). */
  createdAt: string;
  expiredAt: string | null;
  episodeId: string;
  invalidatedBy: string | null;
}

export interface MemoryEpisode {
  kind: 'episode';
  id: string;
  agentId: string;
  userId: string | null;
  sessionId: string;
  text: string;
  reply: string;
  at: string;
  entityIds: string[];
  factIds: string[];
}

export type MemoryItem = MemoryNode | MemoryEdge | MemoryEpisode;

/** A fact that still holds, as far as Cairn knows now. */
export const isCurrent = (edge: MemoryEdge) => edge.invalidAt === null && edge.expiredAt === null;

/** Whose memory: a user's across sessions, or (without a userId) one anonymous session's. */
export function memoryOwner(input: { userId?: string | null; sessionId?: string | null }): { userKey: string; userId: string | null; sessionId: string | null } {
  if (input.userId) return { userKey: `u:${input.userId}`, userId: input.userId, sessionId: null };
  if (input.sessionId) return { userKey: `s:${input.sessionId}`, userId: null, sessionId: input.sessionId };
  throw new Error('memory needs a userId or a sessionId');
}

const strip = ({ pk: _pk, sk: _sk, ...rest }: Record<string, unknown>) => rest as unknown as MemoryItem;

export function memoryGraphStore(db: Db) {
  const { batchWrite, queryAll } = batchOps(db);
  /** An agent's memory of one user (all of it, or one kind), read in pages of DynamoDB's 1 MB. */
  async function loadMemory(scope: TenantScope, userKey: string, agentId: string, kind?: MemoryItem['kind']): Promise<MemoryItem[]> {
    return (await queryAll(keys.memoryPartition(scope, userKey), keys.memoryPrefix(agentId, kind))).map(strip);
  }

  async function getMemoryItem(scope: TenantScope, userKey: string, agentId: string, kind: MemoryItem['kind'], id: string): Promise<MemoryItem | undefined> {
    const out = await db.client.send(
      new GetCommand({ TableName: db.table, Key: keys.memoryItem(scope, userKey, agentId, kind, id) }),
    );
    return out.Item ? strip(out.Item) : undefined;
  }

  /** The users (or anonymous sessions) an agent remembers, at most `limit`. */
  async function rememberedUsers(scope: TenantScope, agentId: string, limit: number): Promise<string[]> {
    const out = await db.client.send(
      new QueryCommand({
        TableName: db.table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.memoryIndexPartition(scope, agentId) },
        Limit: limit,
      }),
    );
    return (out.Items ?? []).map((i) => String(i.sk));
  }

  /** Every user (or anonymous session) an agent remembers. */
  async function everyRememberedUser(scope: TenantScope, agentId: string): Promise<string[]> {
    return (await queryAll(keys.memoryIndexPartition(scope, agentId))).map((i) => String(i.sk));
  }

  /** Creates the node or counts another mention of it (first label and type win). */
  async function upsertNode(scope: TenantScope, userKey: string, node: Omit<MemoryNode, 'mentions' | 'lastSeenAt'>): Promise<void> {
    await db.client.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.memoryItem(scope, userKey, node.agentId, 'node', node.id),
        UpdateExpression:
          'SET kind = :kind, id = :id, agentId = :agentId, userId = :userId, sessionId = :sessionId, #type = if_not_exists(#type, :type), ' +
          'label = if_not_exists(label, :label), norm = :norm, createdAt = if_not_exists(createdAt, :at), lastSeenAt = :at ADD mentions :one',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: {
          ':kind': 'node', ':id': node.id, ':agentId': node.agentId, ':userId': node.userId, ':sessionId': node.sessionId,
          ':type': node.type, ':label': node.label, ':norm': node.norm, ':at': node.createdAt, ':one': 1,
        },
      }),
    );
  }

  /** Ends a fact: it stays in the graph, with when it stopped holding and what superseded it. */
  async function invalidateEdge(scope: TenantScope, userKey: string, edge: MemoryEdge, at: { invalidAt: string; expiredAt: string; by: string | null }): Promise<void> {
    try {
      await db.client.send(
        new UpdateCommand({
          TableName: db.table,
          Key: keys.memoryItem(scope, userKey, edge.agentId, 'edge', edge.id),
          UpdateExpression: 'SET invalidAt = :invalidAt, expiredAt = :expiredAt, invalidatedBy = :by',
          ConditionExpression: 'attribute_exists(pk) AND expiredAt = :null',
          ExpressionAttributeValues: { ':invalidAt': at.invalidAt, ':expiredAt': at.expiredAt, ':by': at.by, ':null': null },
        }),
      );
    } catch (error) {
      // Already superseded by a concurrent turn: the first invalidation stands.
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  async function putMemoryItems(scope: TenantScope, userKey: string, items: Array<MemoryEdge | MemoryEpisode>, agentIds: string[]): Promise<void> {
    await batchWrite([
      ...items.map((item) => putRequest({ ...keys.memoryItem(scope, userKey, item.agentId, item.kind, item.id), ...item })),
      ...agentIds.map((agentId) => putRequest({ ...keys.memoryIndex(scope, agentId, userKey), agentId, userKey })),
    ]);
  }

  /**
   * Forgets a user (or an anonymous session) entirely: every agent's nodes, edges and episodes,
   * and the index entries that point at them. Returns how many items were deleted.
   */
  async function deleteMemoryOf(scope: TenantScope, userKey: string, agentId?: string): Promise<number> {
    const pk = keys.memoryPartition(scope, userKey);
    const items = await queryAll(pk, agentId ? keys.memoryPrefix(agentId) : undefined);
    const agents = new Set(items.map((i) => String(i.agentId)));
    await batchWrite([
      ...items.map((i) => deleteRequest({ pk, sk: String(i.sk) })),
      ...[...agents].map((a) => deleteRequest(keys.memoryIndex(scope, a, userKey))),
    ]);
    return items.length;
  }

  /** Deletes one node (and the edges that touch it) or one edge or episode. */
  async function deleteMemoryItem(scope: TenantScope, userKey: string, item: MemoryItem): Promise<number> {
    const doomed: MemoryItem[] = [item];
    if (item.kind === 'node') {
      const edges = (await loadMemory(scope, userKey, item.agentId, 'edge')) as MemoryEdge[];
      doomed.push(...edges.filter((e) => e.from === item.id || e.to === item.id));
    }
    await batchWrite(doomed.map((d) => deleteRequest(keys.memoryItem(scope, userKey, d.agentId, d.kind, d.id))));
    return doomed.length;
  }
  return { loadMemory, getMemoryItem, rememberedUsers, everyRememberedUser, upsertNode, invalidateEdge, putMemoryItems, deleteMemoryOf, deleteMemoryItem };
}

export type MemoryGraphStore = ReturnType<typeof memoryGraphStore>;
