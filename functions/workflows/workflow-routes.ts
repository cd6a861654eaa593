import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../shared/http/context';
import { registerCrud } from '../../shared/http/crud-routes';
import { commonErrors } from '../../shared/http/openapi-schemas';
import { registerReleaseRoutes } from '../../shared/http/release-routes';
import type { RuntimeWith } from '../../shared/runtime';
import { createWorkflow, getWorkflow, listWorkflows, removeWorkflow, replaceWorkflow, workflow, workflowInput, workflowReleases } from '../../shared/workflows';

/** `/v1/workflows`: definitions (CRUD), their versions and aliases. */
export function registerWorkflowRoutes(app: OpenAPIHono<AppEnv>, rt: RuntimeWith<'scheduler' | 'queues' | 'secrets'>) {
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
}
