import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand as SdkPutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { config } from '../config';
import { createDb } from './db';
import { PutCommand } from './dynamo-commands';
import { assertStorableItem, ITEM_LIMITS, storedSize } from './item-limits';

/**
 * The store refuses, before sending, exactly what DynamoDB would refuse: the same item measured
 * one byte under and one byte over the limit, with strings, numbers, lists and maps in it, is
 * accepted and refused alike by DynamoDB Local itself (through a client without the check) and by
 * the check.
 */
const raw = DynamoDBDocumentClient.from(new DynamoDBClient({ region: config.region, endpoint: config.dynamodbEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }));
const db = createDb();
const put = (client: DynamoDBDocumentClient | typeof db.client, item: Record<string, unknown>) =>
  client === raw ? raw.send(new SdkPutCommand({ TableName: db.table, Item: item })) : db.client.send(new PutCommand({ TableName: db.table, Item: item }));

/** An item of exactly `bytes` by the check's measure, with every kind of value in it. */
function itemOf(bytes: number, sk: string): Record<string, unknown> {
  const base = { pk: 'item-limits', sk, n: 12345.678, list: [1, 'two', { three: true, nil: null }], map: { ä: 'ü', nested: [[1.5e3]] }, pad: '' };
  const size = (item: Record<string, unknown>) => Object.entries(item).reduce((sum, [k, v]) => sum + Buffer.byteLength(k) + storedSize(v), 0);
  return { ...base, pad: 'x'.repeat(bytes - size(base)) };
}

describe('the limits of one stored item', () => {
  it('measures an item as DynamoDB does: accepted at 400 KB, refused one byte over, by DynamoDB and by the check alike', async () => {
    const atLimit = itemOf(ITEM_LIMITS.bytes, 'at');
    const over = itemOf(ITEM_LIMITS.bytes + 1, 'over');
    expect(() => assertStorableItem(atLimit)).not.toThrow();
    await expect(put(raw, atLimit)).resolves.toBeDefined();
    await expect(put(raw, over)).rejects.toThrow(/size/i);
    await expect(put(db.client, over)).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { field: 'pad', sizeBytes: ITEM_LIMITS.bytes + 1 } });
  });

  it('refuses a value nested deeper than a stored record holds, naming its path, where DynamoDB does', async () => {
    const nest = (n: number): unknown => (n === 0 ? 1 : { a: nest(n - 1) });
    await expect(put(raw, { pk: 'item-limits', sk: 'deep31', v: nest(31) })).resolves.toBeDefined();
    await expect(put(db.client, { pk: 'item-limits', sk: 'deep31', v: nest(31) })).resolves.toBeDefined();
    await expect(put(raw, { pk: 'item-limits', sk: 'deep32', v: nest(32) })).rejects.toThrow(/nest/i);
    await expect(put(db.client, { pk: 'item-limits', sk: 'deep32', v: nest(32) })).rejects.toMatchObject({ code: 'INVALID_REQUEST', details: { field: `v${'.a'.repeat(31)}` } });
  });

  it('refuses a sort key over 1,024 bytes of UTF-8 where DynamoDB does', async () => {
    await expect(put(db.client, { pk: 'item-limits', sk: 'Ω'.repeat(512) })).resolves.toBeDefined();
    await expect(put(raw, { pk: 'item-limits', sk: `${'Ω'.repeat(512)}x` })).rejects.toThrow(/key/i);
    await expect(put(db.client, { pk: 'item-limits', sk: `${'Ω'.repeat(512)}x` })).rejects.toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'key' } });
  });
});
