import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { TokenClaims } from '../platform/access-tokens';
import { documentClient, tableName } from './client';
import { keys } from './keys';

/** Records a revocation; it expires (TTL) when the token would have, since it cannot matter after. */
export async function revokeToken(claims: TokenClaims): Promise<void> {
  await documentClient().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...keys.revokedToken(claims.tokenId),
        tenantId: claims.tenantId,
        revokedAt: new Date().toISOString(),
        ...(claims.expiresAt ? { expiresAt: claims.expiresAt + 60 } : {}),
      },
    }),
  );
}

/** A strongly consistent read: a token revoked a moment ago is refused by every instance. */
export async function isRevoked(tokenId: string): Promise<boolean> {
  const out = await documentClient().send(
    new GetCommand({ TableName: tableName(), Key: keys.revokedToken(tokenId), ConsistentRead: true }),
  );
  return out.Item !== undefined;
}
