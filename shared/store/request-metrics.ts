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

let total = 0;

export function countDynamoRequest(): void {
  total++;
  const counters = storage.getStore();
  if (counters) counters.dynamoRequests++;
}

/** Every DynamoDB request this process has made (benchmarks take differences). */
export function totalDynamoRequests(): number {
  return total;
}
