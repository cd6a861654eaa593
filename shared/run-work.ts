// What the steps worker (and the sweeper) load from agents for background runs: named here so that
// loading it with import() takes this, not all the room exports.
export { consumeRunMessage, failLostRun, sendRunStep } from './agents';
