import type { Clock } from '../clock';
import { PutCommand, QueryCommand, UpdateCommand } from './dynamo-commands';
import type { TenantScope } from '../tenancy';
import { ifConditionHolds } from './conditional';
import { claimLeased } from './leased-claim';
import type { Db } from './db';
import { keys } from './keys';
import { anObject, readItem, readItems } from './item-shape';
import { z } from 'zod';

/**
 * Completion webhook deliveries: one item per event of an execution, with every attempt recorded.
 * Claimed and settled like steps (conditional on the attempt), so a duplicated message sends once
 * more at most when a worker died mid-attempt (receivers get at-least-once, with the delivery id
 * to drop repeats).
 */
const deliveryStatus = z.lazy(() => z.enum(['pending', 'delivering', 'retrying', 'delivered', 'failed']));
export type DeliveryStatus = z.infer<typeof deliveryStatus>;

const attemptShape = z.lazy(() => z.object({
  attempt: z.number(),
  at: z.string(),
  durationMs: z.number(),
  /** The receiver's HTTP status, when it answered. */
  status: z.number().optional(),
  error: z.string().optional(),
}));
export type DeliveryAttempt = z.infer<typeof attemptShape>;

const deliveryShape = z.lazy(() => z.object({
  /** The idempotency id receivers see (`Cairn-Delivery-Id`): `<executionId>.<key>`. */
  id: z.string(),
  key: z.string(),
  event: z.string(),
  url: z.string(),
  status: deliveryStatus,
  attempt: z.number(),
  leaseUntil: z.number().optional(),
  attempts: z.array(attemptShape),
  createdAt: z.string(),
  deliveredAt: z.string().optional(),
  /** A delivery that carries what it sends (a background run's): the body, and the sealed signing secret. */
  body: z.string().optional(),
  sealed: anObject.optional(),
  /** `a2a`: an A2A push notification, sent as the protocol has it (its content type; the client's token or credentials, sealed, as its header) rather than signed. */
  style: z.literal('a2a').optional(),
}));
export type DeliveryRecord = z.infer<typeof deliveryShape>;
const read = (item: Record<string, unknown>) => readItem(deliveryShape, item, 'webhook delivery');

export function webhookDeliveriesStore(db: Db, clock: Clock) {
  const key = (scope: TenantScope, executionId: string, deliveryKey: string) => keys.webhookDelivery(scope, executionId, deliveryKey);

  /** Records a delivery to make, once: false when it was already recorded. */
  async function createDelivery(scope: TenantScope, executionId: string, record: DeliveryRecord): Promise<boolean> {
    const out = await ifConditionHolds(db.client.send(new PutCommand({ TableName: db.table, Item: { ...key(scope, executionId, record.key), ...record }, ConditionExpression: 'attribute_not_exists(pk)' })));
    return out !== undefined;
  }

  /** Takes the next attempt (pending, retrying, or delivering on a lease that ran out); undefined when someone has it or it is settled. */
  async function claimDelivery(scope: TenantScope, executionId: string, deliveryKey: string, leaseMs: number): Promise<DeliveryRecord | undefined> {
    const claimed = await claimLeased(db, key(scope, executionId, deliveryKey), 'delivering', leaseMs, clock.now());
    return claimed && read(claimed);
  }

  /** Ends the attempt that claimed it, recording the attempt: delivered, retrying or failed. */
  async function settleDelivery(scope: TenantScope, executionId: string, deliveryKey: string, attempt: number, status: 'delivered' | 'retrying' | 'failed', record: DeliveryAttempt): Promise<boolean> {
    const out = await ifConditionHolds(
      db.client.send(
        new UpdateCommand({
          TableName: db.table,
          Key: key(scope, executionId, deliveryKey),
          UpdateExpression: `SET #st = :status, attempts = list_append(attempts, :record)${status === 'delivered' ? ', deliveredAt = :at' : ''} REMOVE leaseUntil`,
          ConditionExpression: '#st = :delivering AND attempt = :attempt',
          ExpressionAttributeNames: { '#st': 'status' },
          ExpressionAttributeValues: { ':status': status, ':record': [record], ':delivering': 'delivering', ':attempt': attempt, ...(status === 'delivered' ? { ':at': record.at } : {}) },
        }),
      ),
    );
    return out !== undefined;
  }

  /** An execution's deliveries, oldest first. */
  async function listDeliveries(scope: TenantScope, executionId: string): Promise<DeliveryRecord[]> {
    const out = await db.client.send(new QueryCommand({ TableName: db.table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.webhookDeliveryPartition(scope, executionId) }, ConsistentRead: true }));
    return readItems(deliveryShape, out.Items, 'webhook delivery').sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  return { createDelivery, claimDelivery, settleDelivery, listDeliveries };
}
