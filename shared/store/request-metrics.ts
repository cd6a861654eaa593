import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Counts DynamoDB requests per API request, so logs (and the benchmark) can say what each call
 * costs. The store's client increments the counter of whichever request is running.
 */
interface Counters {
  dynamoRequests: number;
}

const storage = new AsyncLocalStorage<Counters>();

export function withRequestMetrics<T>(fn: () => Promise<T>): { result: Promise<T>; counters: Counters } {
  const counters: Counters = { dynamoRequests: 0 };
  return { result: storage.run(counters, fn), counters };
}

export function countDynamoRequest(): void {
  const counters = storage.getStore();
  if (counters) counters.dynamoRequests++;
}
