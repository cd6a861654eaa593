import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { localRuntime } from '../../local/local-runtime';
import { openaiProvider } from '../../shared/models/openai-provider';
import type { ModelResolver } from '../../shared/models/types';
import { config } from '../../shared/config';
import type { PlatformSecrets } from '../../shared/platform/platform-secrets';
import type { Runtime } from '../../shared/runtime';
import { createStore } from '../../shared/store';
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

/**
 * `rt` with its clock moved `ms` ahead: the domain and the store (leases, expiries) read the same
 * moved time, as a process would that runs that much later. Time is moved through the runtime,
 * never by faking Date.
 */
export function runtimeLater(rt: Runtime, ms: number): Runtime {
  const clock = { now: () => rt.clock.now() + ms };
  return { ...rt, clock, store: createStore(rt.store.db, clock) };
}

/**
 * The test runtime's models, with `openai/<model>` answered by the OpenAI-compatible stand-in the
 * test listens with at `server` (a paid model faked at the wire, recorded response shapes).
 */
export function modelsWithStandIn(server: Server): ModelResolver {
  const engine = openaiProvider({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, apiKey: 'sk-test' });
  return { ...testRt.models, resolve: async (name) => (name.startsWith('openai/') ? { name, model: name.slice(7), engine } : testRt.models.resolve(name)) };
}

/** A runtime of the test's own, built as testLocal is (the run's DynamoDB Local, fresh secrets, queues of its own): for workers that must call `models` too. Start it. */
export function localRuntimeWith(models: ModelResolver) {
  return localRuntime({ db: createDb(), secretsKey: randomBytes(32), platformSecrets: testPlatformSecrets, queueNamespace: randomBytes(6).toString('hex'), models });
}
