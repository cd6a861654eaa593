import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Counts DynamoDB requests per API request, so logs (and the benchmark) can say what each call
 * costs. The store's client increments the counter of whichever request is running.
 */
interface Counters {
  dynamoRequests: number;
  /** Read and write capacity units DynamoDB reports it consumed. */
  capacityUnits: number;
}

const storage = new AsyncLocalStorage<Counters>();

export function withRequestMetrics<T>(fn: () => Promise<T>): { result: Promise<T>; counters: Counters } {
  const counters: Counters = { dynamoRequests: 0, capacityUnits: 0 };
  return { result: storage.run(counters, fn), counters };
}

const totals: Counters = { dynamoRequests: 0, capacityUnits: 0 };

export function countDynamoRequest(capacityUnits: number): void {
  totals.dynamoRequests++;
  totals.capacityUnits += capacityUnits;
  const counters = storage.getStore();
  if (counters) {
    counters.dynamoRequests++;
    counters.capacityUnits += capacityUnits;
  }
}

/** Every DynamoDB request this process has made, and the capacity it consumed (benchmarks take differences). */
export function dynamoTotals(): Readonly<Counters> {
  return { ...totals };
}

/** Every DynamoDB request this process has made. */
export function totalDynamoRequests(): number {
  return totals.dynamoRequests;
}
