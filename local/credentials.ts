import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateApiKey } from '../shared/store/api-keys';

export interface LocalCredentials {
  devApiKey: string;
  platformAdminToken: string;
  /** Signs platform access tokens; kept so tokens survive restarts. */
  platformTokenKey: string;
  /** Signs pagination cursors; kept so cursors survive restarts. */
  cursorKey: string;
}

/**
 * Local mode's dev API key, platform admin token, token-signing key and cursor-signing key: from config when set, otherwise generated
 * once and kept (mode 0600) in DATA_DIR so they survive restarts. In memory mode nothing is kept.
 */
export function localCredentials(
  dataDir: string | undefined,
  given: { devApiKey?: string; platformAdminToken?: string; platformTokenKey?: string; cursorKey?: string },
): LocalCredentials {
  const file = dataDir ? join(dataDir, 'credentials.json') : undefined;
  let kept: Partial<LocalCredentials> = {};
  if (file && existsSync(file)) kept = JSON.parse(readFileSync(file, 'utf8')) as Partial<LocalCredentials>;
  const generated: LocalCredentials = {
    devApiKey: kept.devApiKey ?? generateApiKey(),
    platformAdminToken: kept.platformAdminToken ?? `cpa_${randomBytes(32).toString('base64url')}`,
    platformTokenKey: kept.platformTokenKey ?? randomBytes(48).toString('base64url'),
    cursorKey: kept.cursorKey ?? randomBytes(48).toString('base64url'),
  };
  if (file && (!kept.devApiKey || !kept.platformAdminToken || !kept.platformTokenKey || !kept.cursorKey)) {
    mkdirSync(dataDir!, { recursive: true });
    writeFileSync(file, `${JSON.stringify(generated, null, 2)}\n`, { mode: 0o600 });
  }
  return {
    devApiKey: given.devApiKey ?? generated.devApiKey,
    platformAdminToken: given.platformAdminToken ?? generated.platformAdminToken,
    platformTokenKey: given.platformTokenKey ?? generated.platformTokenKey,
    cursorKey: given.cursorKey ?? generated.cursorKey,
  };
}

/** The master key that seals stored secrets locally: kept (0600) in DATA_DIR, or per process. */
export function localSecretsKey(dataDir: string | undefined): Buffer {
  if (!dataDir) return randomBytes(32);
  const file = join(dataDir, 'secrets.key');
  if (existsSync(file)) return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  const key = randomBytes(32);
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600 });
  return key;
}
