import { GetCommand, QueryCommand } from './dynamo-commands';
import type { Db } from './db';
import type { ItemKey } from './keys';

/**
 * Raw reads of one partition for db/ops, whose logical tables locate their partitions through
 * the key builders in `keys.ts` and present each item as a row.
 */
export function partitionsStore(db: Db) {
  async function getItem(key: ItemKey): Promise<Record<string, unknown> | undefined> {
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: key }));
    return out.Item;
  }

  /** One page of a partition in key order, after the sort key `after`, at most `limit` items. */
  async function queryPage(
    location: { pk: string; skPrefix?: string },
    page: { after?: string; limit: number },
  ): Promise<{ items: Record<string, unknown>[]; more: boolean }> {
    const { pk, skPrefix } = location;
    const out = await db.client.send(
      new QueryCommand({
        TableName: db.table,
        KeyConditionExpression: skPrefix ? 'pk = :pk AND begins_with(sk, :prefix)' : 'pk = :pk',
        ExpressionAttributeValues: skPrefix ? { ':pk': pk, ':prefix': skPrefix } : { ':pk': pk },
        ExclusiveStartKey: page.after === undefined ? undefined : { pk, sk: page.after },
        Limit: page.limit,
      }),
    );
    return { items: out.Items ?? [], more: out.LastEvaluatedKey !== undefined };
  }

  return { getItem, queryPage };
}
