import { AsyncLocalStorage } from 'node:async_hooks';

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

const storage = new AsyncLocalStorage<SearchWork>();

/** Runs `fn`, adding every search it makes to `work`. */
export function meteringSearches<T>(work: SearchWork, fn: () => Promise<T>): Promise<T> {
  return storage.run(work, fn);
}

export function countSearch(readUnits: number): void {
  const work = storage.getStore();
  if (!work) return;
  work.searches++;
  work.readUnits += readUnits;
}
