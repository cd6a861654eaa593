import { ConditionalCheckFailedException, GetCommand, QueryCommand, UpdateCommand } from './dynamo-commands';
import { deleteRequest, putRequest, batchOps, type WriteRequest } from './batch';
import type { Db } from './db';
import { keys } from './keys';
import { readItem } from './item-shape';
import { z } from 'zod';
import type { TenantScope } from '../tenancy';

/** Memory items as stored (and as the memory_* tables of db/ops show them). */
const owned = () => ({ id: z.string(), agentId: z.string(), userId: z.string().nullable(), sessionId: z.string().nullable() });
const nodeShape = z.lazy(() => z.object({
  kind: z.literal('node'),
  ...owned(),
  type: z.string(),
  label: z.string(),
  norm: z.string(),
  mentions: z.number(),
  createdAt: z.string(),
  lastSeenAt: z.string(),
}));
const edgeShape = z.lazy(() => z.object({
  kind: z.literal('edge'),
  ...owned(),
  from: z.string(),
  to: z.string(),
  toLabel: z.string(),
  relation: z.string(),
  fact: z.string(),
  /** When the fact became true / stopped being true (world time). */
  validAt: z.string(),
  invalidAt: z.string().nullable(),
  /** When Cairn learnt it / when it was superseded (system time). */
  createdAt: z.string(),
  expiredAt: z.string().nullable(),
  episodeId: z.string(),
  invalidatedBy: z.string().nullable(),
}));
const episodeShape = z.lazy(() => z.object({
  kind: z.literal('episode'),
  ...owned(),
  sessionId: z.string(),
  text: z.string(),
  reply: z.string(),
  at: z.string(),
  entityIds: z.array(z.string()),
  factIds: z.array(z.string()),
}));
const memoryItemShape = z.lazy(() => z.discriminatedUnion('kind', [nodeShape, edgeShape, episodeShape]));
export type MemoryNode = z.infer<typeof nodeShape>;
export type MemoryEdge = z.infer<typeof edgeShape>;
export type MemoryEpisode = z.infer<typeof episodeShape>;
export type MemoryItem = z.infer<typeof memoryItemShape>;

/** A fact that still holds, as far as Cairn knows now. */
export const isCurrent = (edge: MemoryEdge) => edge.invalidAt === null && edge.expiredAt === null;

/** Whose memory: a user's across sessions, or (without a userId) one anonymous session's. */
export function memoryOwner(input: { userId?: string | null; sessionId?: string | null }): { userKey: string; userId: string | null; sessionId: string | null } {
  if (input.userId) return { userKey: `u:${input.userId}`, userId: input.userId, sessionId: null };
  if (input.sessionId) return { userKey: `s:${input.sessionId}`, userId: null, sessionId: input.sessionId };
  throw new Error('memory needs a userId or a sessionId');
}

const strip = (item: Record<string, unknown>) => readItem(memoryItemShape, item, 'memory item');

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

  /** Puts of edges and episodes, and of the index entries that say which agents remember this user, for `writeBatch`. */
  function memoryItemWrites(scope: TenantScope, userKey: string, items: Array<MemoryEdge | MemoryEpisode>, agentIds: string[]): WriteRequest[] {
    return [
      ...items.map((item) => putRequest({ ...keys.memoryItem(scope, userKey, item.agentId, item.kind, item.id), ...item })),
      ...agentIds.map((agentId) => putRequest({ ...keys.memoryIndex(scope, agentId, userKey), agentId, userKey })),
    ];
  }

  /**
   * Puts of nodes, as `upsertNode` would make them of nothing (one mention each time a node is
   * named), for `writeBatch`: only for a memory no one else can have written yet, since a put
   * replaces what is there.
   */
  function newNodeWrites(scope: TenantScope, userKey: string, nodes: Array<Omit<MemoryNode, 'mentions' | 'lastSeenAt'>>): WriteRequest[] {
    const first = new Map<string, MemoryNode>();
    for (const node of nodes) {
      const seen = first.get(node.id);
      if (seen) seen.mentions++;
      else first.set(node.id, { ...node, mentions: 1, lastSeenAt: node.createdAt });
    }
    return [...first.values()].map((node) => putRequest({ ...keys.memoryItem(scope, userKey, node.agentId, 'node', node.id), ...node }));
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

  /**
   * Copies what one agent remembers of one owner to another that has nothing yet (a forked
   * anonymous session): `keep` says which items go, as what (their owner fields rewritten).
   */
  async function copyMemory(scope: TenantScope, from: string, to: string, agentId: string, keep: (item: MemoryItem) => MemoryItem | undefined): Promise<number> {
    const items = (await loadMemory(scope, from, agentId)).map(keep).filter((item) => item !== undefined);
    if (items.length === 0) return 0;
    await batchWrite([...items.map((item) => putRequest({ ...keys.memoryItem(scope, to, agentId, item.kind, item.id), ...item })), putRequest({ ...keys.memoryIndex(scope, agentId, to), agentId, userKey: to })]);
    return items.length;
  }

  /** Everything every agent remembers of one user (or anonymous session). */
  async function memoryOf(scope: TenantScope, userKey: string): Promise<MemoryItem[]> {
    return (await queryAll(keys.memoryPartition(scope, userKey))).map(strip);
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
  return { copyMemory, loadMemory, getMemoryItem, rememberedUsers, everyRememberedUser, upsertNode, invalidateEdge, memoryItemWrites, newNodeWrites, deleteMemoryOf, deleteMemoryItem, memoryOf };
}

export type MemoryGraphStore = ReturnType<typeof memoryGraphStore>;
