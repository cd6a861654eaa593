import { isoNow, type Clock } from '../clock';
import { GetCommand, PutCommand } from './dynamo-commands';
import type { Db } from './db';
import { keys } from './keys';

export function revokedTokensStore(db: Db, clock: Clock) {
  /** Records a revocation; it expires (TTL) when the token would have, since it cannot matter after. */
  async function revokeToken(claims: { tokenId: string; tenantId: string; expiresAt?: number }): Promise<void> {
    await db.client.send(
      new PutCommand({
        TableName: db.table,
        Item: {
          ...keys.revokedToken(claims.tokenId),
          tenantId: claims.tenantId,
          revokedAt: isoNow(clock),
          ...(claims.expiresAt ? { expiresAt: claims.expiresAt + 60 } : {}),
        },
      }),
    );
  }

  /** A strongly consistent read: a token revoked a moment ago is refused by every instance. */
  async function isRevoked(tokenId: string): Promise<boolean> {
    const out = await db.client.send(
      new GetCommand({ TableName: db.table, Key: keys.revokedToken(tokenId), ConsistentRead: true }),
    );
    return out.Item !== undefined;
  }
  return { revokeToken, isRevoked };
}

export type RevokedTokensStore = ReturnType<typeof revokedTokensStore>;
