import { createGroupApp, DEFAULT_MAX_BODY_BYTES, type GroupOptions } from '../../shared/http/create-group-app';
import { lazyRoutes } from '../../shared/http/lazy-routes';
import type { RuntimeWith } from '../../shared/runtime';

/** The paths whose bodies may be JSON Lines (the group's body guard lets them through to the route: evaluation cases). */
const EVAL_JSON_LINES_PATHS = /^\/v1\/eval-datasets\/[^/]+\/cases$/;

/**
 * Evaluations: `/v1/eval-datasets` (datasets and their cases) and `/v1/eval-runs` (runs, their
 * results, cancel). A group of its own, so the agents function does not carry the scorers and the
 * run bookkeeping; it counts against the agents area's rate limits, as before. Runs execute on the
 * workflow-steps queue's worker.
 */
export function createEvalsApp(rt: RuntimeWith<'models' | 'queues'>, options: Partial<GroupOptions> = {}) {
  const app = createGroupApp(rt, { area: 'agents', maxBodyBytes: DEFAULT_MAX_BODY_BYTES, jsonLinesPaths: EVAL_JSON_LINES_PATHS, ...options });
  lazyRoutes(app, rt, ['/v1/eval-datasets', '/v1/eval-runs'], async () => (await import('./eval-routes')).registerEvalRoutes);
  return app;
}
