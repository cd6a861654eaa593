import { frameSlot, slotValue, withSlot } from '../work-frame';

/**
 * Counts DynamoDB work per scope — an API request, a search inside it — so logs, spans, usage and
 * the benchmarks can say what each costs. The store's client adds every request to each scope it
 * runs in (scopes nest: a search's requests count for its API request too).
 */
export interface DynamoCounters {
  dynamoRequests: number;
  /** Capacity units DynamoDB reports consumed by reads (Get, Query, Scan, their batch and transaction forms). */
  readUnits: number;
  /** Capacity units consumed by writes. */
  writeUnits: number;
  /** Reads and writes together. */
  capacityUnits: number;
}

const zero = (): DynamoCounters => ({ dynamoRequests: 0, readUnits: 0, writeUnits: 0, capacityUnits: 0 });
const scopes = frameSlot<DynamoCounters[]>('DynamoDB counters');
const totals = zero();

/** Runs `fn`, counting the DynamoDB work it does (and still counting it for any enclosing scope). */
export function withDynamoCounters<T>(fn: () => Promise<T>): { result: Promise<T>; counters: DynamoCounters } {
  const counters = zero();
  return { result: withSlot(scopes, [...(slotValue(scopes) ?? []), counters], fn), counters };
}

export function countDynamoRequest(units: { read: number; write: number }): void {
  for (const counters of [totals, ...(slotValue(scopes) ?? [])]) {
    counters.dynamoRequests++;
    counters.readUnits += units.read;
    counters.writeUnits += units.write;
    counters.capacityUnits += units.read + units.write;
  }
}

/** Every DynamoDB request this process has made, and the capacity it consumed (benchmarks take differences). */
export function dynamoTotals(): Readonly<DynamoCounters> {
  return { ...totals };
}
