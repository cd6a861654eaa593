/**
 * The one table definition: the CDK data stack and local mode's table set-up both read it, so the
 * deployed table and DynamoDB Local cannot drift apart. Changing it is a migration; bump `version`.
 */
export const tableDefinition = {
  version: 1,
  partitionKey: 'pk',
  sortKey: 'sk',
  /** Epoch seconds; DynamoDB deletes the item some time after (rate counters, idempotency keys). */
  timeToLiveAttribute: 'expiresAt',
} as const;
