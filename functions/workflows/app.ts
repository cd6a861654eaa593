import { workflow, workflowInput } from '../../shared/domain/workflow-schema';
import { createWorkflow, replaceWorkflow, workflows } from '../../shared/domain/workflows';
import { createGroupApp, DEFAULT_MAX_BODY_BYTES, type GroupOptions } from '../../shared/http/create-group-app';
import { registerCrud } from '../../shared/http/crud-routes';
import { registerExecutionRoutes } from './execution-routes';

/** `/v1/workflows`: definitions, execution and execution records. */
export function createWorkflowsApp(options: Partial<GroupOptions> = {}) {
  const app = createGroupApp({ area: 'workflows', maxBodyBytes: DEFAULT_MAX_BODY_BYTES, ...options });
  registerCrud(app, {
    basePath: '/v1/workflows',
    idParam: 'workflowId',
    tag: 'Workflows',
    noun: 'workflow',
    input: workflowInput,
    output: workflow,
    create: createWorkflow,
    get: (scope, id) => workflows.get(scope, id),
    list: (scope, page) => workflows.list(scope, page),
    replace: replaceWorkflow,
    remove: (scope, id) => workflows.remove(scope, id),
  });
  registerExecutionRoutes(app);
  return app;
}

export const app = createWorkflowsApp();
