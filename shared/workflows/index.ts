/**
 * Workflows: definitions and their compiler, executions (the steps worker, progress, human steps,
 * maps), inbound hooks, completion webhooks and schedules. Everything else in this folder is private.
 */
export { followExecution } from './execution-events';
export { consumeWorkflowMessage, redriveExecution } from './execution';
export { cancelExecution, executeAndWait, FINISHED as FINISHED_EXECUTION, getExecution, listDeliveries, listExecutions, presentExecution, rerunExecution, startExecution } from './executions';
export { authenticateHook, createHook, deleteHook, hookInput, hookOutput, listHooks, receiveHook } from './hooks';
export { completeHumanStep, listWaitingExecutions } from './human';
export { finishExecution, sendSteps } from './progress';
export { nextRunOf } from './schedule-schema';
export { tickSchedules } from './schedules';
export { deliverWebhook } from './webhooks';
export { webhookInput, webhookShown } from './webhook-schema';
export { workflow, workflowInput, workflowInputExample } from './workflow-schema';
export { documentStepFields } from './steps/step-fields-document';
export { workflowReleases } from './workflow-releases';
export { notifyWith, queueDelivery, sealDeliverySecret, sealWebhook, showWebhook } from './webhooks';
export { storedWebhook } from './webhook-schema';
export { compileDefinition, createWorkflow, getWorkflow, listWorkflows, presentWorkflow, removeWorkflow, replaceWorkflow, storedWorkflow, workflows } from './workflows';
