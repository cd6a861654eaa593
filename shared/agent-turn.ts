// What the steps worker loads from agents with its first agent step: named here so that loading
// it with import() takes the turn, not all the room exports.
export { agentRuns, agentTurn } from './agents';
