import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { timingSafeEqual, createHash } from 'node:crypto';
import { z } from 'zod';
import { config } from '../config';

/** The admin credential for provisioning tenants and the key that signs access tokens. */
export interface PlatformSecrets {
  adminToken: string;
  tokenKey: string;
}

const CACHE_MS = 5 * 60_000;
let given: PlatformSecrets | undefined;
let cached: { secrets: PlatformSecrets; until: number } | undefined;

/** Local mode and tests hand the secrets over directly (generated and kept in DATA_DIR). */
export function usePlatformSecrets(secrets: PlatformSecrets | undefined): void {
  given = secrets;
  cached = undefined;
}

const stored = z.object({ adminToken: z.string().min(16), tokenKey: z.string().min(32) });

/**
 * From the environment when both are set, else (AWS) from one Secrets Manager secret, re-read at
 * most every five minutes per instance so a rotated admin token is picked up.
 */
export async function platformSecrets(client?: SecretsManagerClient): Promise<PlatformSecrets> {
  if (given) return given;
  if (config.platformAdminToken && config.platformTokenKey) {
    return { adminToken: config.platformAdminToken, tokenKey: config.platformTokenKey };
  }
  if (!config.platformSecretsArn) throw new Error('platform secrets are not configured (PLATFORM_SECRETS_ARN)');
  if (cached && cached.until > Date.now()) return cached.secrets;
  const sm = client ?? new SecretsManagerClient({ region: config.region, ...(config.secretsManagerEndpoint ? { endpoint: config.secretsManagerEndpoint } : {}) });
  const out = await sm.send(new GetSecretValueCommand({ SecretId: config.platformSecretsArn }));
  const secrets = stored.parse(JSON.parse(out.SecretString ?? '{}'));
  cached = { secrets, until: Date.now() + CACHE_MS };
  return secrets;
}

/** Constant-time comparison (of digests, so lengths never leak either). */
export function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}
