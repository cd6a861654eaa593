import { frameSlot, slotValue, withSlot } from '../work-frame';

/**
 * Searches counted where they happen and billed by whoever runs the work around them (a turn, a
 * workflow step, an API request): the searcher need not know whose work it is, and the work is
 * billed in its one usage write instead of one write per search.
 */
export interface SearchWork {
  searches: number;
  /** DynamoDB read capacity units the searches consumed. */
  readUnits: number;
}

const billed = frameSlot<SearchWork>('searches billed');

/** Runs `fn`, adding every search it makes to `work`. */
export function meteringSearches<T>(work: SearchWork, fn: () => Promise<T>): Promise<T> {
  return withSlot(billed, work, fn);
}

export function countSearch(readUnits: number): void {
  const work = slotValue(billed);
  if (!work) return;
  work.searches++;
  work.readUnits += readUnits;
}
