import { ConditionalCheckFailedException, GetCommand, PutCommand, UpdateCommand } from './dynamo-commands';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { TenantScope } from '../tenancy';
import type { Db } from './db';
import { batchOps } from './batch';
import { keys, type BudgetHolder } from './keys';

export type { BudgetHolder };
/** What a budget counts: tokens, or millionths of a US dollar (integers add exactly). */
export type BudgetUnit = 'tokens' | 'microUsd';
export interface BudgetLimits {
  monthlyTokens?: number;
  monthlyUsd?: number;
}

const usedAttribute = (unit: BudgetUnit) => (unit === 'tokens' ? 'used' : 'usedMicroUsd');

/** A limits item as its limits; a month's item as what it used. */
const limitsFrom = (item: Record<string, unknown> = {}): BudgetLimits => ({
  ...(item.monthlyTokens !== undefined ? { monthlyTokens: Number(item.monthlyTokens) } : {}),
  ...(item.monthlyUsd !== undefined ? { monthlyUsd: Number(item.monthlyUsd) } : {}),
});
const usedFrom = (item: Record<string, unknown> = {}) => ({ tokens: Number(item.used ?? 0), microUsd: Number(item.usedMicroUsd ?? 0) });

/**
 * Monthly budgets of a tenant and of its API keys: one item per holder and month counts the tokens
 * and the money spent and reserved by model calls in flight. A reservation is one conditional
 * update — admitted only if it fits — so calls on every instance at once never pass a budget
 * together; a settled call gives back what it did not use.
 */
export function tokenBudgetsStore(db: Db) {
  const { batchGet } = batchOps(db);

  /**
   * What a call needs to know, in one read: the limits and this month's use of the tenant and (with
   * `keyId`) of the key.
   */
  async function standing(scope: TenantScope, month: string, keyId?: string) {
    const holders: BudgetHolder[] = keyId ? [{ tenant: true }, { keyId }] : [{ tenant: true }];
    const wanted = holders.flatMap((h) => [keys.tokenBudgetLimit(scope, h), keys.tokenBudget(scope, month, h)]);
    const items = await batchGet(wanted, { consistent: true, withKeys: true });
    const itemAt = (key: { sk: string }) => items.find((i) => i.sk === key.sk);
    const of = (holder: BudgetHolder) => ({ limits: limitsFrom(itemAt(keys.tokenBudgetLimit(scope, holder))), used: usedFrom(itemAt(keys.tokenBudget(scope, month, holder))) });
    return { tenant: of({ tenant: true }), ...(keyId ? { key: of({ keyId }) } : {}) };
  }
  async function used(scope: TenantScope, holder: BudgetHolder, month: string): Promise<{ tokens: number; microUsd: number }> {
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.tokenBudget(scope, month, holder), ConsistentRead: true }));
    return usedFrom(out.Item);
  }

  async function reserve(scope: TenantScope, holder: BudgetHolder, month: string, unit: BudgetUnit, amount: number, limit: number): Promise<{ allowed: boolean; used: number }> {
    const attribute = usedAttribute(unit);
    if (amount > limit) return { allowed: false, used: (await used(scope, holder, month))[unit] };
    try {
      const out = await db.client.send(
        new UpdateCommand({
          TableName: db.table,
          Key: keys.tokenBudget(scope, month, holder),
          UpdateExpression: 'ADD #used :n',
          ConditionExpression: 'attribute_not_exists(#used) OR #used <= :room',
          ExpressionAttributeNames: { '#used': attribute },
          ExpressionAttributeValues: { ':n': amount, ':room': limit - amount },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { allowed: true, used: Number(out.Attributes?.[attribute] ?? amount) };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      return { allowed: false, used: Number((error.Item ? unmarshall(error.Item) : {})[attribute] ?? 0) };
    }
  }

  /** Adds (or, negative, gives back) an amount: a settled call's actual use against its reservation. */
  async function adjust(scope: TenantScope, holder: BudgetHolder, month: string, unit: BudgetUnit, amount: number): Promise<void> {
    if (amount === 0) return;
    await db.client.send(
      new UpdateCommand({ TableName: db.table, Key: keys.tokenBudget(scope, month, holder), UpdateExpression: 'ADD #used :n', ExpressionAttributeNames: { '#used': usedAttribute(unit) }, ExpressionAttributeValues: { ':n': amount } }),
    );
  }

  /** The holder's own monthly limits, if it set any. */
  async function limitsOf(scope: TenantScope, holder: BudgetHolder): Promise<BudgetLimits> {
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.tokenBudgetLimit(scope, holder) }));
    return limitsFrom(out.Item);
  }

  /** Sets the holder's limits: a value sets one, null removes it, absent leaves it. */
  async function setLimits(scope: TenantScope, holder: BudgetHolder, change: { monthlyTokens?: number | null; monthlyUsd?: number | null }): Promise<BudgetLimits> {
    const next: BudgetLimits = { ...(await limitsOf(scope, holder)) };
    for (const field of ['monthlyTokens', 'monthlyUsd'] as const) {
      const value = change[field];
      if (value === null) delete next[field];
      else if (value !== undefined) next[field] = value;
    }
    await db.client.send(new PutCommand({ TableName: db.table, Item: { ...keys.tokenBudgetLimit(scope, holder), ...next } }));
    return next;
  }

  return { standing, reserve, adjust, used, limitsOf, setLimits };
}

export type TokenBudgetsStore = ReturnType<typeof tokenBudgetsStore>;
