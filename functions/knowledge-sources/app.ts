import { createGroupApp, type GroupOptions } from '../../shared/http/create-group-app';
import { lazyRoutes } from '../../shared/http/lazy-routes';
import type { RuntimeWith } from '../../shared/runtime';

/** Raw body limit: a request's file content (5 MB) plus JSON escaping, under Lambda's 6 MB payload. */
const MAX_BODY_BYTES = 6 * 1024 * 1024 - 64 * 1024;

/**
 * `/v1/knowledge-sources`: sources and their files, connecting (which queues ingestion) and search.
 * The routes (and the code behind them) load when a request first reaches them (lazyRoutes).
 */
export function createKnowledgeSourcesApp(rt: RuntimeWith<'queues' | 'secrets' | 'blobs' | 'models'>, options: Partial<GroupOptions> = {}) {
  const app = createGroupApp(rt, { area: 'knowledge-sources', maxBodyBytes: MAX_BODY_BYTES, multipartPaths: /^\/v1\/knowledge-sources\/[^/]+\/files$/, ...options });
  lazyRoutes(app, rt, ['/v1/knowledge-sources'], async () => (await import('./source-routes')).registerSourceRoutes);
  return app;
}
