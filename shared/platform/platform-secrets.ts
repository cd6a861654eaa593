import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { timingSafeEqual, createHash } from 'node:crypto';
import { config } from '../config';
import { secretStringReader } from '../secrets/secrets-manager';

/** The admin credential for provisioning tenants and the key that signs access tokens. */
export interface PlatformSecrets {
  adminToken: string;
  tokenKey: string;
}

const CACHE_MS = 5 * 60_000;

/**
 * The platform secrets of a runtime: the given ones (local mode and tests, generated and kept in
 * DATA_DIR), from the environment when both are set, else (AWS) from two Secrets Manager secrets,
 * re-read at most every five minutes per instance so a rotated admin token is picked up.
 */
export function platformSecretsLoader(given?: PlatformSecrets, client?: SecretsManagerClient): () => Promise<PlatformSecrets> {
  let cached: { secrets: PlatformSecrets; until: number } | undefined;
  const secretString = secretStringReader(client);
  return async () => {
    if (given) return given;
    if (config.platformAdminToken && config.platformTokenKey) {
      return { adminToken: config.platformAdminToken, tokenKey: config.platformTokenKey };
    }
    const adminArn = config.platformAdminTokenSecretArn;
    const keyArn = config.platformTokenKeySecretArn;
    if (!adminArn || !keyArn) throw new Error('platform secrets are not configured (PLATFORM_ADMIN_TOKEN_SECRET_ARN, PLATFORM_TOKEN_KEY_SECRET_ARN)');
    if (cached && cached.until > performance.now()) return cached.secrets;
    const read = async (arn: string) => {
      const value = (await secretString(arn)) ?? '';
      if (value.length < 32) throw new Error(`secret ${arn} holds fewer than 32 characters`);
      return value;
    };
    const [adminToken, tokenKey] = await Promise.all([read(adminArn), read(keyArn)]);
    cached = { secrets: { adminToken, tokenKey }, until: performance.now() + CACHE_MS };
    return cached.secrets;
  };
}

/** Constant-time comparison (of digests, so lengths never leak either). */
export function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}
