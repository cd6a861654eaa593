import { createHash } from 'node:crypto';

/** A document's id: stable for a source and its key (a file's path, a row's key), so a re-indexed document keeps it. */
export const documentIdOf = (sourceId: string, key: string) => `doc_${createHash('sha256').update(`${sourceId}\u0000${key}`).digest('hex').slice(0, 26)}`;
