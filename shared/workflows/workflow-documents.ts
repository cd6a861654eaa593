import { documentsOf } from '../release-documents';
import { parseInput } from '../validation';
import { storedWorkflow } from './workflow-records';
import { workflowInput, workflowInputExample } from './workflow-schema';
import { createWorkflow, preparedWorkflow, removeWorkflow, workflowInputOf, workflows } from './workflows';

/**
 * A workflow as a portable document (`cairn.workflow/v1`): its draft, versions and aliases, with
 * each step's and its webhook's secret a placeholder. An imported step whose secret is not given
 * fails when it runs until one is set; a webhook whose secret is not given is left out.
 */
export const workflowDocuments = documentsOf({
  kind: 'WORKFLOW',
  shape: storedWorkflow,
  label: 'workflow',
  draft: (rt, scope, id) => workflows.get(rt, scope, id),
  inputOf: workflowInputOf,
  prepare: preparedWorkflow,
  create: (rt, scope, input, idempotency) => createWorkflow(rt, scope, parseInput(workflowInput, input), idempotency),
  remove: removeWorkflow,
  example: workflowInputExample,
});
