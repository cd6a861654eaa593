import { executeAndWait, workflows } from '../workflows';
import { templateText } from '../templates';
import { ToolFailure, ValidationError } from '../errors';
import type { WorkflowDefinition, ToolKind } from '../tools';

/** `workflow`: runs one of the tenant's workflows and returns its output (or, still running, its execution id). */
export const workflowTool: ToolKind<WorkflowDefinition, WorkflowDefinition> = {
  type: 'workflow',
  // The workflow must be the tenant's when the agent is written (another tenant's id reads as none).
  async prepare(rt, scope, tool, at) {
    if (!(await workflows.find(rt, scope, tool.workflowId))) throw new ValidationError(`${at}.workflowId`, `refers to workflow ${tool.workflowId}, which does not exist`);
    return tool;
  },
  expose: (tool) => [
    {
      name: tool.name,
      description: tool.description,
      parameters: { type: 'object', properties: { input: { type: 'string', description: 'The workflow’s input' }, parameters: { type: 'object' } }, required: ['input'] },
      requireApproval: tool.requireApproval,
      ...(tool.policy ? { policy: tool.policy } : {}),
      async call(args, { rt, scope, timeoutMs, keyId, user }) {
        const { execution, finished } = await executeAndWait(rt, scope, tool.workflowId, { input: templateText(args.input), parameters: (args.parameters as Record<string, unknown> | undefined) ?? {}, keyId, ...(user ? { user } : {}) }, timeoutMs);
        if (!finished) return `The workflow is still running (execution ${execution.id}); its result is not available yet.`;
        if (execution.status !== 'succeeded') throw new ToolFailure(`the workflow ${execution.status}: ${execution.error?.message ?? ''}`);
        return templateText(execution.output);
      },
    },
  ],
};
