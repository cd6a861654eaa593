import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { type AppendInput, appendCases, appendInput, caseShown, casesOfJsonLines, cancelRun, createDataset, datasetInput, datasetShown, getDataset, getRun, listResults, listRuns, removeDataset, resultShown, runInput, runShown, startRun, listCases, listDatasets, MAX_CASES, casesOfAppend } from '../../shared/evals';
import type { Context } from 'hono';
import type { AppEnv } from '../../shared/http/context';
import { isJsonLines } from '../../shared/http/middleware/body-guard';
import { idempotencyHeader, idempotencyOf, registerListRoute } from '../../shared/http/crud-routes';
import { ok, okList } from '../../shared/http/envelope';
import { commonErrors, deletedSchema, envelope, errorResponse, jsonContent, listEnvelope, locationHeader, replayedHeader } from '../../shared/http/openapi-schemas';
import { paginationQuery } from '../../shared/http/pagination';
import type { Runtime } from '../../shared/runtime';

const base = '/v1/eval-datasets';
const tags = ['Evaluations'];
const security = [{ ApiKeyAuth: [] }];
const params = z.object({ datasetId: z.string().min(1).max(200) });

/** `/v1/eval-datasets`: datasets of evaluation cases, made, listed, read, deleted, and added to in JSON or JSON Lines. */
export function registerEvalRoutes(app: OpenAPIHono<AppEnv>, rt: Runtime) {
  const scope = (c: Context<AppEnv>) => c.get('identity').scope;

  app.openapi(
    createRoute({
      method: 'post',
      path: base,
      operationId: 'createEvalDataset',
      tags,
      summary: 'Create an evaluation dataset, with cases or empty',
      description: `A case is an input (a question, or chat messages) and what a good reply does (\`expected\`, read by the scorers). OpenAI Evals lines (\`{"input": [messages], "ideal": …}\`) are taken too: \`ideal\` is the expected answer. At most ${MAX_CASES} cases a dataset.`,
      security,
      request: { body: { content: { 'application/json': { schema: datasetInput } }, required: true }, headers: idempotencyHeader },
      responses: {
        201: { ...jsonContent(envelope(datasetShown), 'The dataset'), headers: { Location: locationHeader, 'Idempotent-Replayed': replayedHeader } },
        409: jsonContent(errorResponse, 'The Idempotency-Key was already used with a different body'),
        ...commonErrors,
      },
    }),
    async (c) => {
      const input = c.req.valid('json');
      const { record, replayed } = await createDataset(rt, scope(c), input, idempotencyOf(c, input));
      c.header('Location', `${base}/${record.id}`);
      if (replayed) c.header('Idempotent-Replayed', 'true');
      return ok(c, record, 201);
    },
  );

  registerListRoute(app, rt, {
    path: base,
    operationId: 'listEvalDatasets',
    tag: tags[0]!,
    summary: 'List evaluation datasets, newest first',
    security,
    errors: commonErrors,
    item: datasetShown,
    scope,
    list: listDatasets,
  });

  app.openapi(
    createRoute({ method: 'get', path: `${base}/{datasetId}`, operationId: 'getEvalDataset', tags, summary: 'Get an evaluation dataset', security, request: { params }, responses: { 200: jsonContent(envelope(datasetShown), 'The dataset'), ...commonErrors } }),
    async (c) => ok(c, await getDataset(rt, scope(c), c.req.valid('param').datasetId)),
  );

  app.openapi(
    createRoute({ method: 'delete', path: `${base}/{datasetId}`, operationId: 'deleteEvalDataset', tags, summary: 'Delete an evaluation dataset and its cases', security, request: { params }, responses: { 200: jsonContent(envelope(deletedSchema), 'Deleted'), 409: jsonContent(errorResponse, 'Runs of the dataset are queued or running (details.runs)'), ...commonErrors } }),
    async (c) => {
      const { id } = await removeDataset(rt, scope(c), c.req.valid('param').datasetId);
      return ok(c, { id, deleted: true as const });
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: `${base}/{datasetId}/cases`,
      operationId: 'addEvalCases',
      tags,
      summary: 'Add cases after those there',
      description: `JSON \`{cases: [...]}\`; or \`{fromMessage: {agentId, sessionId, messageId}, expected?}\`, an agent’s stored reply and the question before it as one case (its feedback kept in metadata); or JSON Lines (\`content-type: application/x-ndjson\`, one case a line; OpenAI Evals lines too). A line that is not JSON, or not a case, is a 400 naming its number, and nothing is added. Past ${MAX_CASES} cases, a 409 that adds nothing.`,
      security,
      request: {
        params,
        // Not marked required: a required body is validated as JSON whatever its type, and JSON Lines are not (an empty request is still a 400 naming cases).
        body: { content: { 'application/json': { schema: appendInput }, 'application/x-ndjson': { schema: z.string().openapi({ description: 'One case a line' }) } }, required: false },
      },
      responses: {
        200: jsonContent(envelope(z.object({ dataset: datasetShown, added: z.int() })), 'The dataset after the append, and how many cases it took'),
        409: jsonContent(errorResponse, `The dataset would hold more than ${MAX_CASES} cases`),
        ...commonErrors,
      },
    }),
    async (c) => {
      // JSON Lines reach the route unparsed (the body guard lets them through on this path); JSON was validated as EvalCasesInput.
      const cases = isJsonLines(c.req.header('content-type')) ? casesOfJsonLines(await c.req.text()) : await casesOfAppend(rt, scope(c), c.req.valid('json') as AppendInput);
      return ok(c, await appendCases(rt, scope(c), c.req.valid('param').datasetId, cases));
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: `${base}/{datasetId}/cases`,
      operationId: 'listEvalCases',
      tags,
      summary: 'A dataset’s cases, in the order they were added',
      security,
      request: { params, query: paginationQuery },
      responses: { 200: jsonContent(listEnvelope(caseShown), 'A page of cases'), ...commonErrors },
    }),
    async (c) => {
      const page = c.req.valid('query');
      const listed = await listCases(rt, scope(c), c.req.valid('param').datasetId, page);
      return okList(c, listed.items, { limit: page.limit, nextCursor: listed.nextCursor });
    },
  );

  const runs = '/v1/eval-runs';
  const runParams = z.object({ runId: z.string().min(1).max(200) });

  app.openapi(
    createRoute({
      method: 'post',
      path: runs,
      operationId: 'startEvalRun',
      tags,
      summary: 'Run a dataset against an agent or a workflow and score it',
      description:
        'Each case is one message on the steps queue, `concurrency` at a time; the run answers at once (202) and is followed with GET. 404 for an unknown dataset, agent, workflow, version or alias; 400 for an empty dataset, an unknown scorer (naming scorers[i]) or a comparison with another dataset’s run.',
      security,
      request: { body: { content: { 'application/json': { schema: runInput } }, required: true } },
      responses: { 202: { ...jsonContent(envelope(runShown), 'The run, queued'), headers: { Location: locationHeader } }, ...commonErrors },
    }),
    async (c) => {
      const run = await startRun(rt, scope(c), c.req.valid('json'));
      c.header('Location', `${runs}/${run.id}`);
      return ok(c, run, 202);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: runs,
      operationId: 'listEvalRuns',
      tags,
      summary: 'List evaluation runs, newest first',
      security,
      request: { query: paginationQuery.extend({ datasetId: z.string().min(1).max(200).optional().openapi({ description: 'Only this dataset’s runs (a page may then hold fewer than limit)' }) }) },
      responses: { 200: jsonContent(listEnvelope(runShown), 'A page of runs'), ...commonErrors },
    }),
    async (c) => {
      const { datasetId, ...page } = c.req.valid('query');
      const listed = await listRuns(rt, scope(c), page, datasetId);
      return okList(c, listed.items, { limit: page.limit, nextCursor: listed.nextCursor });
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: `${runs}/{runId}`,
      operationId: 'getEvalRun',
      tags,
      summary: 'An evaluation run: its status, progress and, when done, its summary',
      security,
      request: { params: runParams },
      responses: { 200: jsonContent(envelope(runShown), 'The run'), ...commonErrors },
    }),
    async (c) => ok(c, await getRun(rt, scope(c), c.req.valid('param').runId)),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: `${runs}/{runId}/cancel`,
      operationId: 'cancelEvalRun',
      tags,
      summary: 'Cancel a run: cases not yet started are not run',
      security,
      request: { params: runParams },
      responses: { 200: jsonContent(envelope(runShown), 'The run, canceled'), 409: jsonContent(errorResponse, 'The run has finished'), ...commonErrors },
    }),
    async (c) => ok(c, await cancelRun(rt, scope(c), c.req.valid('param').runId)),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: `${runs}/{runId}/results`,
      operationId: 'listEvalResults',
      tags,
      summary: 'A run’s results, case by case in dataset order',
      security,
      request: { params: runParams, query: paginationQuery },
      responses: { 200: jsonContent(listEnvelope(resultShown), 'A page of results'), ...commonErrors },
    }),
    async (c) => {
      const page = c.req.valid('query');
      const listed = await listResults(rt, scope(c), c.req.valid('param').runId, page);
      return okList(c, listed.items, { limit: page.limit, nextCursor: listed.nextCursor });
    },
  );
}
