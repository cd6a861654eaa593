import type { Clock } from '../clock';
import { ConditionalCheckFailedException, GetCommand, PutCommand, QueryCommand, UpdateCommand } from './dynamo-commands';
import { config } from '../config';
import type { TenantScope } from '../tenancy';
import { batchOps, deleteRequest, putRequest, readPage, type WriteRequest } from './batch';
import type { Db } from './db';
import { ifConditionHolds } from './conditional';
import { keys } from './keys';
import { readItem } from './item-shape';
import { z } from 'zod';

/** One turn of a conversation as stored (and listed by the API). */
const messageShape = z.lazy(() => z.object({
  id: z.string(),
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  createdAt: z.string(),
  /** Assistant turns: the passages the reply was grounded on. */
  sources: z.array(z.unknown()).optional(),
  model: z.string().optional(),
  /** Assistant turns cut short because the caller went away (the partial reply is kept). */
  interrupted: z.boolean().optional(),
  /** Assistant turns: the tools called on the way to the reply, with what they returned. */
  toolCalls: z.array(z.unknown()).optional(),
  /** The agent definition the turn ran: a version number, or the draft (turns before versions: absent). */
  agentVersion: z.union([z.number(), z.literal('draft')]).optional(),
  /** Assistant turns: what a person thought of the reply (the last rating given). */
  feedback: z.object({ rating: z.enum(['up', 'down']), comment: z.string().optional(), at: z.string() }).optional(),
  /** Assistant turns that ended calling the caller's own tools (OpenAI-style): the calls, for the caller's results to continue. */
  clientToolCalls: z.array(z.object({ id: z.string(), name: z.string(), arguments: z.record(z.string(), z.unknown()).optional() })).optional(),
  /** Assistant turns: the tokens the whole turn used (turns stored before this was kept: absent). */
  usage: z.object({ inputTokens: z.number(), outputTokens: z.number(), cachedInputTokens: z.number().optional() }).optional(),
  /** Assistant turns that did not end as the model chose to (`length`: cut at the token limit). */
  finishReason: z.string().optional(),
  /** Assistant turns answered by an agent the session was handed to (not its own): that agent (`agt_…[:release]`); it holds the session's next turn. */
  agentId: z.string().optional(),
  /** Assistant turns: the handoffs the turn made, in order. */
  handoffs: z.array(z.object({ from: z.string(), to: z.string() })).optional(),
}));
export type SessionMessage = z.infer<typeof messageShape>;
export type MessageFeedback = NonNullable<SessionMessage['feedback']>;

/** A session's older turns summarized: turns after `through` are given the summary in their place. */
export interface SessionCompaction {
  /** The last message the summary covers. */
  through: string;
  summary: string;
  /** Who wrote it: a model (`provider/model`), or `extractive` (the built-in engine's summary). */
  by: string;
  at: string;
}
const compactionShape = z.object({ through: z.string(), summary: z.string(), by: z.string(), at: z.string() });

/** A conversation as the session index keeps it. */
export interface SessionSummary {
  sessionId: string;
  userId?: string;
  createdAt: string;
  lastMessageAt: string;
  /** Messages written (user and assistant turns). */
  messages: number;
  /** A child session (an agent asked by another's tool): the asking agent and its session. */
  parentAgentId?: string;
  parentSessionId?: string;
}

/** The session of the agent whose tool asked: a child session's link up. */
export interface SessionParent {
  agentId: string;
  sessionId: string;
}

const strip = (item: Record<string, unknown>) => readItem(messageShape, item, 'session message');

/** A turn's mark on its session's index: when, by whom, how many messages it added. */
export interface SessionTouch {
  agentId: string;
  sessionId: string;
  userId?: string;
  at: string;
  messages: number;
  parent?: SessionParent;
}

const parentOf = (item: Record<string, unknown>): Pick<SessionSummary, 'parentAgentId' | 'parentSessionId'> =>
  typeof item.parentSessionId === 'string' ? { parentAgentId: String(item.parentAgentId), parentSessionId: item.parentSessionId } : {};

export function sessionsStore(db: Db, clock: Clock) {
  const { batchWrite, queryAll } = batchOps(db);
  /** Writes that append turns (each expires SESSION_TTL_DAYS after it was written), for `writeBatch`. */
  function messageWrites(scope: TenantScope, agentId: string, sessionId: string, messages: SessionMessage[]): WriteRequest[] {
    const pk = keys.sessionPartition(scope, agentId, sessionId);
    const expiresAt = Math.floor(clock.now() / 1000) + config.sessionTtlDays * 86400;
    return messages.map((m) => putRequest({ pk, sk: m.id, ...m, expiresAt }));
  }

  /** The session index item's fields at a turn: it expires with the session's last turn. */
  const indexValues = (s: SessionTouch) => ({
    agentId: s.agentId,
    sessionId: s.sessionId,
    userId: s.userId ?? null,
    at: s.at,
    expiresAt: Math.floor(Date.parse(s.at) / 1000) + config.sessionTtlDays * 86400,
  });

  /** Keeps the session's index item current after a turn of a session that may have others. */
  async function touchSession(scope: TenantScope, s: SessionTouch): Promise<void> {
    const v = indexValues(s);
    await db.client.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.sessionIndex(scope, s.agentId, s.sessionId),
        UpdateExpression:
          'SET agentId = :agentId, sessionId = :sessionId, userId = if_not_exists(userId, :userId), createdAt = if_not_exists(createdAt, :at), ' +
          'lastMessageAt = :at, expiresAt = :expiresAt ADD messages :n',
        ExpressionAttributeValues: { ':agentId': v.agentId, ':sessionId': v.sessionId, ':userId': v.userId, ':at': v.at, ':expiresAt': v.expiresAt, ':n': s.messages },
      }),
    );
  }

  /**
   * Claims a session id a client chose for `userId` (null: for no end user) before its first turn
   * is written: the index item is made now if it is not there, and the session is this user's when
   * it was made for them. False when it holds another user's conversation (or one of nobody's,
   * for a user). Nothing else of the item changes.
   */
  async function claimSession(scope: TenantScope, agentId: string, sessionId: string, userId: string | null): Promise<boolean> {
    const v = indexValues({ agentId, sessionId, userId: userId ?? undefined, at: new Date(clock.now()).toISOString(), messages: 0 });
    const mine = userId === null ? '(attribute_not_exists(userId) OR attribute_type(userId, :null))' : 'userId = :userId';
    const claimed = await ifConditionHolds(
      db.client.send(
        new UpdateCommand({
          TableName: db.table,
          Key: keys.sessionIndex(scope, agentId, sessionId),
          UpdateExpression: 'SET agentId = :agentId, sessionId = :sessionId, userId = if_not_exists(userId, :userId), createdAt = if_not_exists(createdAt, :at), lastMessageAt = if_not_exists(lastMessageAt, :at), expiresAt = if_not_exists(expiresAt, :expiresAt), messages = if_not_exists(messages, :zero)',
          ConditionExpression: `attribute_not_exists(pk) OR ${mine}`,
          ExpressionAttributeValues: { ':agentId': v.agentId, ':sessionId': v.sessionId, ':userId': v.userId, ':at': v.at, ':expiresAt': v.expiresAt, ':zero': 0, ...(userId === null ? { ':null': 'NULL' } : {}) },
        }),
      ),
    );
    return claimed !== undefined;
  }

  /**
   * The index item of a session whose first turn this is, as `touchSession` would make it, as a
   * write for `writeBatch`: only for a session no one else can have written yet (its id not yet
   * given out), since a put replaces what is there.
   */
  function openingWrite(scope: TenantScope, s: SessionTouch): WriteRequest {
    const v = indexValues(s);
    return putRequest({
      ...keys.sessionIndex(scope, s.agentId, s.sessionId),
      agentId: v.agentId,
      sessionId: v.sessionId,
      userId: v.userId,
      createdAt: v.at,
      lastMessageAt: v.at,
      expiresAt: v.expiresAt,
      messages: s.messages,
      ...(s.parent ? { parentAgentId: s.parent.agentId, parentSessionId: s.parent.sessionId } : {}),
    });
  }

  /** The last `count` turns, oldest first: the window a model is given. */
  async function recentMessages(scope: TenantScope, agentId: string, sessionId: string, count: number): Promise<SessionMessage[]> {
    const out = await db.client.send(
      new QueryCommand({
        TableName: db.table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.sessionPartition(scope, agentId, sessionId) },
        ScanIndexForward: false,
        Limit: count,
      }),
    );
    return (out.Items ?? []).map(strip).reverse();
  }

  /** Oldest first, with the API's cursor pagination. */
  async function listMessages(
    scope: TenantScope,
    agentId: string,
    sessionId: string,
    page: { limit: number; cursor?: string },
  ): Promise<{ items: SessionMessage[]; nextCursor: string | null }> {
    const { items, nextCursor } = await readPage(db, keys.sessionPartition(scope, agentId, sessionId), page, 'oldest-first');
    return { items: items.map(strip), nextCursor };
  }

  /** The ids of every session of an agent (from the tenant's session index). */
  async function sessionsOf(scope: TenantScope, agentId: string): Promise<string[]> {
    return (await queryAll(keys.sessionIndexPartition(scope), keys.sessionIndexPrefix(agentId))).map((s) => String(s.sessionId));
  }

  /** An agent's sessions, newest id first (session ids are time-ordered), with the API's cursor pagination. */
  async function listSessions(scope: TenantScope, agentId: string, page: { limit: number; cursor?: string }): Promise<{ items: SessionSummary[]; nextCursor: string | null }> {
    const { items, nextCursor } = await readPage(db, keys.sessionIndexPartition(scope), page, 'newest-first', keys.sessionIndexPrefix(agentId));
    return {
      items: items.map((s) => ({
        sessionId: String(s.sessionId),
        ...(typeof s.userId === 'string' ? { userId: s.userId } : {}),
        createdAt: String(s.createdAt),
        lastMessageAt: String(s.lastMessageAt),
        messages: Number(s.messages ?? 0),
        ...parentOf(s),
      })),
      nextCursor,
    };
  }

  /** One turn, or undefined. */
  async function getMessage(scope: TenantScope, agentId: string, sessionId: string, messageId: string): Promise<SessionMessage | undefined> {
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: { pk: keys.sessionPartition(scope, agentId, sessionId), sk: messageId }, ConsistentRead: true }));
    return out.Item ? strip(out.Item) : undefined;
  }

  /** The turn just before `messageId` (the question an answer replied to), or undefined. */
  async function messageBefore(scope: TenantScope, agentId: string, sessionId: string, messageId: string): Promise<SessionMessage | undefined> {
    const out = await db.client.send(
      new QueryCommand({
        TableName: db.table,
        KeyConditionExpression: 'pk = :pk AND sk < :sk',
        ExpressionAttributeValues: { ':pk': keys.sessionPartition(scope, agentId, sessionId), ':sk': messageId },
        ScanIndexForward: false,
        Limit: 1,
      }),
    );
    return out.Items?.[0] ? strip(out.Items[0]) : undefined;
  }

  /**
   * Sets an assistant turn's feedback, replacing any given before; returns the turn as it was
   * (its earlier rating is what a recount takes back), or undefined when it is gone meanwhile.
   */
  async function setFeedback(scope: TenantScope, agentId: string, sessionId: string, messageId: string, feedback: MessageFeedback): Promise<SessionMessage | undefined> {
    try {
      const out = await db.client.send(
        new UpdateCommand({
          TableName: db.table,
          Key: { pk: keys.sessionPartition(scope, agentId, sessionId), sk: messageId },
          UpdateExpression: 'SET feedback = :feedback',
          ConditionExpression: 'attribute_exists(pk) AND #role = :assistant',
          ExpressionAttributeNames: { '#role': 'role' },
          ExpressionAttributeValues: { ':feedback': feedback, ':assistant': 'assistant' },
          ReturnValues: 'ALL_OLD',
        }),
      );
      return out.Attributes ? strip(out.Attributes) : undefined;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }

  /** Every session of one end user (`context.userId`), across the tenant's agents. */
  async function sessionsOfUser(scope: TenantScope, userId: string): Promise<Array<{ agentId: string; sessionId: string }>> {
    const items = await queryAll(keys.sessionIndexPartition(scope), undefined, { expression: 'userId = :user', values: { ':user': userId } });
    return items.map((item) => ({ agentId: String(item.agentId), sessionId: String(item.sessionId) }));
  }

  /** A session's index entry: who it is with, when it began. */
  async function getSession(scope: TenantScope, agentId: string, sessionId: string): Promise<SessionSummary | undefined> {
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.sessionIndex(scope, agentId, sessionId), ProjectionExpression: 'sessionId, userId, createdAt, lastMessageAt, messages, parentAgentId, parentSessionId' }));
    if (!out.Item) return undefined;
    const { userId, parentAgentId: _a, parentSessionId: _s, ...rest } = out.Item as SessionSummary & { userId?: string | null; parentAgentId?: string; parentSessionId?: string };
    return { ...rest, ...(userId ? { userId } : {}), ...parentOf(out.Item) };
  }

  /** Every message of a session, oldest first. */
  async function allMessages(scope: TenantScope, agentId: string, sessionId: string): Promise<SessionMessage[]> {
    return (await queryAll(keys.sessionPartition(scope, agentId, sessionId))).map(strip);
  }

  /** The session's sealed token vault (guardrails' tokenize), or undefined. */
  async function getVault(scope: TenantScope, agentId: string, sessionId: string): Promise<unknown> {
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.sessionIndex(scope, agentId, sessionId), ProjectionExpression: 'vault' }));
    return out.Item?.vault;
  }

  async function putVault(scope: TenantScope, agentId: string, sessionId: string, sealed: unknown): Promise<void> {
    await db.client.send(new UpdateCommand({ TableName: db.table, Key: keys.sessionIndex(scope, agentId, sessionId), UpdateExpression: 'SET vault = :vault', ExpressionAttributeValues: { ':vault': sealed } }));
  }

  async function getCompaction(scope: TenantScope, agentId: string, sessionId: string): Promise<SessionCompaction | undefined> {
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.sessionCompaction(scope, agentId, sessionId) }));
    return out.Item ? readItem(compactionShape, out.Item, 'session compaction') : undefined;
  }

  /**
   * Keeps a newer summary: turns that compact at once each write theirs, and the one that covers
   * more of the session stays. Expires with the session's turns.
   */
  async function putCompaction(scope: TenantScope, agentId: string, sessionId: string, compaction: SessionCompaction): Promise<void> {
    try {
      await db.client.send(
        new PutCommand({
          TableName: db.table,
          Item: { ...keys.sessionCompaction(scope, agentId, sessionId), ...compaction, expiresAt: Math.floor(clock.now() / 1000) + config.sessionTtlDays * 86400 },
          ConditionExpression: 'attribute_not_exists(pk) OR #through < :through',
          ExpressionAttributeNames: { '#through': 'through' },
          ExpressionAttributeValues: { ':through': compaction.through },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  /** Deletes these turns of a session (its index entry stays). */
  async function deleteMessages(scope: TenantScope, agentId: string, sessionId: string, messageIds: string[]): Promise<void> {
    const pk = keys.sessionPartition(scope, agentId, sessionId);
    await batchWrite(messageIds.map((id) => deleteRequest({ pk, sk: id })));
  }

  /** The turn just after `messageId`, or undefined. */
  async function messageAfter(scope: TenantScope, agentId: string, sessionId: string, messageId: string): Promise<SessionMessage | undefined> {
    const out = await db.client.send(
      new QueryCommand({
        TableName: db.table,
        KeyConditionExpression: 'pk = :pk AND sk > :sk',
        ExpressionAttributeValues: { ':pk': keys.sessionPartition(scope, agentId, sessionId), ':sk': messageId },
        Limit: 1,
      }),
    );
    return out.Items?.[0] ? strip(out.Items[0]) : undefined;
  }

  /** Deletes every turn; returns how many there were. */
  async function deleteSession(scope: TenantScope, agentId: string, sessionId: string): Promise<number> {
    const pk = keys.sessionPartition(scope, agentId, sessionId);
    const items = await queryAll(pk);
    await batchWrite([
      ...items.map((item) => deleteRequest({ pk, sk: String(item.sk) })),
      deleteRequest(keys.sessionIndex(scope, agentId, sessionId)),
      deleteRequest(keys.pausedTurn(scope, agentId, sessionId)),
      deleteRequest(keys.sessionCompaction(scope, agentId, sessionId)),
    ]);
    return items.length;
  }
  return { messageWrites, touchSession, claimSession, openingWrite, recentMessages, listMessages, listSessions, sessionsOf, deleteSession, deleteMessages, getMessage, messageBefore, messageAfter, setFeedback, getVault, putVault, getCompaction, putCompaction, sessionsOfUser, allMessages, getSession };
}

export type SessionsStore = ReturnType<typeof sessionsStore>;
