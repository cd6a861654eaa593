import { UpdateCommand } from './dynamo-commands';
import { ifConditionHolds } from './conditional';
import type { Db } from './db';
import type { ItemKey } from './keys';

/**
 * Takes a unit of queued work kept as its own item (a map item, a webhook delivery): from
 * `pending` or `retrying`, or from `active` when the lease of the delivery that took it has run out
 * (that worker died). The next attempt is counted and leased; undefined when someone else has it or
 * it is settled.
 */
export async function claimLeased(db: Db, key: ItemKey, active: string, leaseMs: number, now: number): Promise<Record<string, unknown> | undefined> {
  const out = await ifConditionHolds(
    db.client.send(
      new UpdateCommand({
        TableName: db.table,
        Key: key,
        UpdateExpression: 'SET #st = :active, attempt = attempt + :one, leaseUntil = :until',
        ConditionExpression: '#st IN (:pending, :retrying) OR (#st = :active AND leaseUntil < :now)',
        ExpressionAttributeNames: { '#st': 'status' },
        ExpressionAttributeValues: { ':active': active, ':pending': 'pending', ':retrying': 'retrying', ':one': 1, ':until': now + leaseMs, ':now': now },
        ReturnValues: 'ALL_NEW',
      }),
    ),
  );
  return out?.Attributes;
}
