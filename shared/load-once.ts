import { config } from './config';

/**
 * A module (or anything costly) loaded on first use and kept: `const sdk = loadOnce(() => import('@aws-sdk/client-sqs'))`.
 * Each AWS SDK client is 80-170 ms of imports at a cold start; a function that never sends to a
 * queue or a model should not pay for them. A failed load is tried again on the next call.
 */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
}

const firstUses: Array<() => Promise<unknown>> = [];

/**
 * Code a function loads when it first needs it (a route section, a kind of queued work), and
 * keeps: as loadOnce, and listed for preloadAll.
 */
export function onFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  const once = loadOnce(load);
  firstUses.push(once);
  return once;
}

/**
 * Loads now all that onFirstUse would load later (PRELOAD=true): for provisioned concurrency,
 * whose start is paid before any request arrives.
 */
export async function preloadAll(): Promise<void> {
  await Promise.all(firstUses.map((use) => use()));
}

/** Where a function starts: preloadAll when PRELOAD=true, else nothing (all loads on first use). */
export async function preloadIfConfigured(): Promise<void> {
  if (config.preload) await preloadAll();
}
