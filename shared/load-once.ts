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
