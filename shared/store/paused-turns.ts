import { isoNow, type Clock } from '../clock';
import { DeleteCommand, GetCommand, PutCommand } from './dynamo-commands';
import { config } from '../config';
import type { TenantScope } from '../tenancy';
import type { Db } from './db';
import { keys } from './keys';
import { ifConditionHolds } from './conditional';

/**
 * Turns paused for a person to approve tool calls: one per conversation, kept until resumed (or the
 * session's time to live), so a resume works from any instance and after restarts. Resuming takes
 * the item away in one conditional delete: exactly one resume wins.
 */
export function pausedTurnsStore(db: Db, clock: Clock) {
  /** False when the conversation already has a paused turn. */
  async function pause(scope: TenantScope, agentId: string, sessionId: string, state: Record<string, unknown>): Promise<boolean> {
    const paused = await ifConditionHolds(
      db.client.send(
        new PutCommand({
          TableName: db.table,
          Item: { ...keys.pausedTurn(scope, agentId, sessionId), state, pausedAt: isoNow(clock), expiresAt: Math.floor(clock.now() / 1000) + config.sessionTtlDays * 86400 },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
    return paused !== undefined;
  }

  async function peek(scope: TenantScope, agentId: string, sessionId: string): Promise<Record<string, unknown> | undefined> {
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.pausedTurn(scope, agentId, sessionId), ConsistentRead: true }));
    return out.Item?.state as Record<string, unknown> | undefined;
  }

  /** Takes the paused turn to resume it; undefined when there is none (never paused, or resumed already). */
  async function take(scope: TenantScope, agentId: string, sessionId: string): Promise<Record<string, unknown> | undefined> {
    const out = await ifConditionHolds(
      db.client.send(new DeleteCommand({ TableName: db.table, Key: keys.pausedTurn(scope, agentId, sessionId), ConditionExpression: 'attribute_exists(pk)', ReturnValues: 'ALL_OLD' })),
    );
    return out?.Attributes?.state as Record<string, unknown> | undefined;
  }

  return { pause, peek, take };
}

export type PausedTurnsStore = ReturnType<typeof pausedTurnsStore>;
