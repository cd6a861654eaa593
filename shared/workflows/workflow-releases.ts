import { z } from '@hono/zod-openapi';
import { aliasShown, releasesOf } from '../releases';
import { parseInput } from '../validation';
import { storedWorkflow } from './workflow-records';
import { workflow, workflowInput } from './workflow-schema';
import { presentWorkflow, workflowInputOf, workflows } from './workflows';
import { workflowDocuments } from './workflow-documents';

/**
 * A workflow's releases, as an agent's: the draft (the workflow as PUT leaves it) published as
 * immutable numbered versions, and aliases that route executions to versions by weight. An
 * execution names a version, an alias or neither (the draft), and records which ran.
 */

export const workflowVersionShown = z
  .object({ workflowId: z.string(), version: z.int(), description: z.string(), createdAt: z.string(), workflow })
  .openapi('WorkflowVersion');

export const workflowAliasShown = aliasShown.extend({ workflowId: z.string() }).openapi('WorkflowAlias');

const released = releasesOf({
  kind: 'WORKFLOW',
  shape: storedWorkflow,
  label: 'workflow',
  idField: 'workflowId',
  draft: (rt, scope, id) => workflows.get(rt, scope, id),
  present: presentWorkflow,
  // The draft must validate as a PUT would now.
  validate: async (_rt, _scope, draft) => {
    parseInput(workflowInput, workflowInputOf(draft));
  },
});

/** A workflow's releases as the release routes serve them. */
export const workflowReleases = {
  ...released,
  ...workflowDocuments,
  idParam: 'workflowId',
  noun: 'workflow',
  tag: 'Workflow releases',
  versionShown: workflowVersionShown,
  shown: workflow,
  aliasShown: workflowAliasShown,
};
