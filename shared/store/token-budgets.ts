import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { TenantScope } from '../tenancy';
import type { Db } from './db';
import { keys } from './keys';

/**
 * A tenant's monthly token budget: one item per month counts the tokens spent and reserved by model
 * calls in flight. A reservation is one conditional update — admitted only if it fits — so calls on
 * every instance at once never pass the budget together; a settled call gives back what it did not use.
 */
export function tokenBudgetsStore(db: Db) {
  async function reserve(scope: TenantScope, month: string, tokens: number, budget: number): Promise<{ allowed: boolean; used: number }> {
    if (tokens > budget) return { allowed: false, used: await used(scope, month) };
    try {
      const out = await db.client.send(
        new UpdateCommand({
          TableName: db.table,
          Key: keys.tokenBudget(scope, month),
          UpdateExpression: 'ADD used :n',
          ConditionExpression: 'attribute_not_exists(used) OR used <= :room',
          ExpressionAttributeValues: { ':n': tokens, ':room': budget - tokens },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { allowed: true, used: Number(out.Attributes?.used ?? tokens) };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      return { allowed: false, used: Number((error.Item ? unmarshall(error.Item) : {}).used ?? 0) };
    }
  }

  /** Adds (or, negative, gives back) tokens: a settled call's actual use against its reservation. */
  async function adjust(scope: TenantScope, month: string, tokens: number): Promise<void> {
    if (tokens === 0) return;
    await db.client.send(new UpdateCommand({ TableName: db.table, Key: keys.tokenBudget(scope, month), UpdateExpression: 'ADD used :n', ExpressionAttributeValues: { ':n': tokens } }));
  }

  async function used(scope: TenantScope, month: string): Promise<number> {
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.tokenBudget(scope, month), ConsistentRead: true }));
    return Number(out.Item?.used ?? 0);
  }

  /** The tenant's own monthly limit (below its plan's), if it set one. */
  async function limitOf(scope: TenantScope): Promise<number | undefined> {
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.tokenBudgetLimit(scope) }));
    return out.Item?.monthlyTokens === undefined ? undefined : Number(out.Item.monthlyTokens);
  }

  async function setLimit(scope: TenantScope, monthlyTokens: number | null): Promise<void> {
    if (monthlyTokens === null) await db.client.send(new DeleteCommand({ TableName: db.table, Key: keys.tokenBudgetLimit(scope) }));
    else await db.client.send(new PutCommand({ TableName: db.table, Item: { ...keys.tokenBudgetLimit(scope), monthlyTokens } }));
  }

  return { reserve, adjust, used, limitOf, setLimit };
}

export type TokenBudgetsStore = ReturnType<typeof tokenBudgetsStore>;
