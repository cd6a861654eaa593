// What the sweeper loads from knowledge when it first finds a stuck sync: named here so that
// loading it with import() takes these, not all the room exports (ingestion, PDF reading…).
export { knowledgeSources, setStatus, startSync } from './knowledge';
