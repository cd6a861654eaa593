import { randomBytes } from 'node:crypto';
import { localRuntime } from '../../local/local-runtime';
import { config } from '../../shared/config';
import type { PlatformSecrets } from '../../shared/platform/platform-secrets';
import { createDb } from '../../shared/store/db';

/** The platform secrets this test file's environment holds (test/setup/env.ts). */
export const testPlatformSecrets: PlatformSecrets = { adminToken: config.platformAdminToken!, tokenKey: config.platformTokenKey! };

/**
 * The runtime of one test file, built as local mode builds its own: the run's DynamoDB Local, a
 * fresh secrets key, the platform secrets above and stored queues of its own with their workers
 * running (vitest gives each file its own module instance, so each file has its own).
 */
export const testLocal = localRuntime({
  db: createDb(),
  secretsKey: randomBytes(32),
  platformSecrets: testPlatformSecrets,
  queueNamespace: randomBytes(6).toString('hex'),
});
await testLocal.start();

export const testRt = testLocal.rt;
