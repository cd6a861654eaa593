// What the steps worker loads from agents with its first memory extraction: named here so that
// loading it with import() takes this, not all the room exports.
export { consumeMemoryMessage } from './agents';
