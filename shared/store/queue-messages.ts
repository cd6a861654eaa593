import { isoNow, type Clock } from '../clock';
import { DeleteCommand, QueryCommand, TransactionCanceledException, TransactWriteCommand } from './dynamo-commands';
import { newId } from '../ids';
import type { Db } from './db';
import { batchOps, putRequest } from './batch';
import { keys } from './keys';
import { readItems } from './item-shape';
import { z } from 'zod';

/**
 * Local mode's work queues, stored in the table itself so queued work survives a crash of the
 * process (kill -9, power loss) exactly as SQS would keep it. A message's sort key is
 * `<visibleAt>#<id>`: receiving reads the visible range in order, and taking a message moves it
 * (one transaction: delete the key read, put it under its new visibility), so exactly one receiver
 * wins it and the key it was moved to is that receiver's receipt.
 */
const messageShape = z.lazy(() => z.object({
  /** The receipt: the message's current key. Deleting or moving it needs this exact key. */
  sk: z.string(),
  messageId: z.string(),
  body: z.string(),
  /** What travels beside the body, as SQS message attributes do (the trace context). */
  attributes: z.record(z.string(), z.string()).optional(),
  receiveCount: z.number(),
  /** Taken by a receiver (its visibility is a lease), not given back. */
  leased: z.boolean().optional(),
}));
export type StoredMessage = z.infer<typeof messageShape>;

export function queueMessagesStore(db: Db, clock: Clock) {
  const ops = batchOps(db);

  /**
   * Queues messages visible from `visibleAt`; `taken`: received at once by the sender's own
   * receiver (leased until `visibleAt`, as a receive would leave them), one write instead of three.
   */
  async function send(namespace: string, queue: string, bodies: string[], visibleAt: number, attributes?: Record<string, string>, taken = false): Promise<StoredMessage[]> {
    const messages = bodies.map((body) => {
      const messageId = newId('message', clock.now());
      return { ...keys.queueMessage(namespace, queue, visibleAt, messageId), messageId, body, ...(attributes ? { attributes } : {}), receiveCount: taken ? 1 : 0, ...(taken ? { leased: true } : {}) };
    });
    await ops.batchWrite(messages.map((m) => putRequest(m)));
    return messages;
  }

  /**
   * Up to `limit` messages visible at `now`, oldest visibility first, and when the first message
   * not yet visible in that read becomes visible (a receiver sleeps until then, not a fixed poll).
   */
  async function peek(namespace: string, queue: string, now: number, limit: number): Promise<{ visible: StoredMessage[]; nextVisibleAt?: number }> {
    const out = await db.client.send(
      new QueryCommand({
        TableName: db.table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.queuePartition(namespace, queue) },
        Limit: limit,
        ConsistentRead: true,
      }),
    );
    const messages = readItems(messageShape, out.Items, 'queue message');
    const upTo = keys.queueVisibleBefore(now + 1);
    const later = messages.findIndex((m) => m.sk >= upTo);
    if (later === -1) return { visible: messages };
    return { visible: messages.slice(0, later), nextVisibleAt: keys.queueVisibleAt(messages[later]!.sk) };
  }

  /**
   * Moves a message to a new visibility time (taking it, extending its lease or giving it back);
   * undefined when its key is no longer `message.sk` (another receiver moved or deleted it).
   */
  async function move(namespace: string, queue: string, message: StoredMessage, visibleAt: number, change: { received?: boolean; leased: boolean }): Promise<StoredMessage | undefined> {
    const pk = keys.queuePartition(namespace, queue);
    const next = {
      ...keys.queueMessage(namespace, queue, visibleAt, message.messageId),
      messageId: message.messageId,
      body: message.body,
      ...(message.attributes ? { attributes: message.attributes } : {}),
      receiveCount: message.receiveCount + (change.received ? 1 : 0),
      leased: change.leased,
    };
    try {
      await db.client.send(
        new TransactWriteCommand({
          TransactItems: [
            { Delete: { TableName: db.table, Key: { pk, sk: message.sk }, ConditionExpression: 'attribute_exists(pk)' } },
            { Put: { TableName: db.table, Item: next } },
          ],
        }),
      );
      return next;
    } catch (error) {
      if (error instanceof TransactionCanceledException) return undefined;
      throw error;
    }
  }

  /** Acknowledges a message (a no-op when another receiver has it by now). */
  async function remove(namespace: string, queue: string, message: StoredMessage): Promise<void> {
    await db.client.send(new DeleteCommand({ TableName: db.table, Key: { pk: keys.queuePartition(namespace, queue), sk: message.sk } }));
  }

  /** Moves a message that failed too often to the queue's dead letters (kept for inspection). */
  async function deadLetter(namespace: string, queue: string, message: StoredMessage, reason: string): Promise<void> {
    await db.client.send(
      new TransactWriteCommand({
        TransactItems: [
          { Delete: { TableName: db.table, Key: { pk: keys.queuePartition(namespace, queue), sk: message.sk } } },
          {
            Put: {
              TableName: db.table,
              Item: { ...keys.deadLetter(namespace, queue, message.messageId), body: message.body, receiveCount: message.receiveCount, reason, at: isoNow(clock) },
            },
          },
        ],
      }),
    );
  }

  /** Every message still queued (visible or not, taken or not). */
  const pending = async (namespace: string, queue: string) => readItems(messageShape, await ops.queryAll(keys.queuePartition(namespace, queue)), 'queue message');

  const deadLetters = (namespace: string, queue: string) => ops.queryAll(keys.deadLetterPartition(namespace, queue));

  // clock: a queue over this store times visibility by the same clock the store writes with.
  return { clock, send, peek, move, remove, deadLetter, pending, deadLetters };
}

export type QueueMessagesStore = ReturnType<typeof queueMessagesStore>;
