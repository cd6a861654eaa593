import { workflow, workflowInput, workflowReleases, createWorkflow, getWorkflow, listWorkflows, removeWorkflow, replaceWorkflow } from '../../shared/workflows';
import { commonErrors } from '../../shared/http/openapi-schemas';
import { registerReleaseRoutes } from '../../shared/http/release-routes';
import { createGroupApp, DEFAULT_MAX_BODY_BYTES, type GroupOptions } from '../../shared/http/create-group-app';
import { registerCrud } from '../../shared/http/crud-routes';
import { registerExecutionRoutes } from './execution-routes';
import { hookAuth, registerHookRoutes } from './hook-routes';
import type { RuntimeWith } from '../../shared/runtime';

/** `/v1/workflows`: definitions, execution and execution records. */
export function createWorkflowsApp(rt: RuntimeWith<'scheduler' | 'queues' | 'secrets'>, options: Partial<GroupOptions> = {}) {
  const app = createGroupApp(rt, { area: 'workflows', maxBodyBytes: DEFAULT_MAX_BODY_BYTES, selfAuthenticated: { path: '/v1/hooks', auth: hookAuth(rt) }, ...options });
  registerCrud(app, rt, {
    basePath: '/v1/workflows',
    idParam: 'workflowId',
    tag: 'Workflows',
    noun: 'workflow',
    operationNoun: 'Workflow',
    input: workflowInput,
    output: workflow,
    create: createWorkflow,
    get: getWorkflow,
    list: listWorkflows,
    replace: replaceWorkflow,
    remove: removeWorkflow,
  });
  registerReleaseRoutes(app, rt, { ...workflowReleases, basePath: '/v1/workflows', operationNoun: 'Workflow', security: [{ ApiKeyAuth: [] }], errors: commonErrors, scope: (c) => c.get('identity').scope });
  registerExecutionRoutes(app, rt);
  registerHookRoutes(app, rt);
  return app;
}

