// What the steps worker and the sweeper load from workflows when they first have such work: named
// here so that loading it with import() takes these, not all the room exports.
export { consumeWorkflowMessage, finishExecution, redriveExecution, sendSteps } from './workflows';
