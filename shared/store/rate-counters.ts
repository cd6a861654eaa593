import type { Clock } from '../clock';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { WindowLimits } from '../plans';
import type { TenantScope } from '../tenancy';
import type { Db } from './db';
import { keys } from './keys';

export interface WindowCounts {
  allowed: boolean;
  minute: number;
  hour: number;
}

export function rateCountersStore(db: Db, clock: Clock) {
  /**
   * Takes one request from both fixed windows at once, or none if either is spent. Both counters
   * live in one item per clock hour (minutes nest in hours), so a single conditional update is
   * atomic across every Lambda instance, and a rejected request consumes nothing.
   */
  async function consumeRequest(
    scope: TenantScope,
    keyId: string,
    area: string,
    limits: WindowLimits,
    now = clock.now(),
  ): Promise<WindowCounts> {
    const hourStart = Math.floor(now / 3_600_000) * 3600;
    const minuteIndex = Math.floor((now % 3_600_000) / 60_000);
    const minuteAttr = `m${minuteIndex}`;
    try {
      const out = await db.client.send(
        new UpdateCommand({
          TableName: db.table,
          Key: keys.rateWindow(scope, keyId, area, hourStart),
          UpdateExpression: 'ADD #h :one, #m :one SET expiresAt = if_not_exists(expiresAt, :expires)',
          ConditionExpression:
            '(attribute_not_exists(#h) OR #h < :hourLimit) AND (attribute_not_exists(#m) OR #m < :minuteLimit)',
          ExpressionAttributeNames: { '#h': 'h', '#m': minuteAttr },
          ExpressionAttributeValues: {
            ':one': 1,
            ':hourLimit': limits.hour,
            ':minuteLimit': limits.minute,
            // Kept a little past the hour so a late request never finds a missing item mid-hour.
            ':expires': hourStart + 3600 + 300,
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      const item = out.Attributes ?? {};
      return { allowed: true, minute: Number(item[minuteAttr] ?? 1), hour: Number(item.h ?? 1) };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // The SDK hands back the item as it stood, in wire format.
      const item = error.Item ? unmarshall(error.Item) : {};
      return { allowed: false, minute: Number(item[minuteAttr] ?? 0), hour: Number(item.h ?? 0) };
    }
  }
  return { consumeRequest };
}

export type RateCountersStore = ReturnType<typeof rateCountersStore>;
