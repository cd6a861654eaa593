import { crawl, type KnownPage } from './connectors/web-crawler';
import { log } from '../log';
import { outboundRequest } from '../net/outbound';
import type { Runtime } from '../runtime';
import type { TenantScope } from '../tenancy';
import { deleteFiles, readFileBytes, writeFiles } from './file-contents';
import { knowledgeSources, webConfigOf, type KnowledgeSourceRecord } from './sources';
import { isoNow } from '../clock';

/**
 * `web` sources: a sync crawls the site (through the outbound guard, as agents' tools call URLs)
 * and keeps each page it reached as a file whose path is the page's URL and whose content is in
 * the files bucket; ingestion then indexes changed pages like any file. A page that answered 304,
 * or the same bytes, keeps its version; a page that is gone (404, 410, noindex) or no longer
 * linked leaves the source; a page that failed this time (5xx, timeout) keeps its last version.
 */

/** The most a page (or a document it links to) may weigh. */
const MAX_PAGE_BYTES = 20 * 1024 * 1024;
const PAGE_TIMEOUT_MS = 20_000;

export async function refreshWebEntries(rt: Runtime, scope: TenantScope, source: KnowledgeSourceRecord): Promise<void> {
  const settings = webConfigOf(source);
  const existing = new Map((await rt.store.files.listFiles(scope, source.id)).map((f) => [f.path, f]));
  const known = new Map<string, KnownPage>();
  for (const [url, file] of existing) {
    known.set(url, { etag: file.etag, lastModified: file.lastModified, body: () => readFileBytes(rt, scope, source.id, file) });
  }
  const pages = await crawl({
    ...settings,
    known,
    fetch: async (url, headers) => {
      const res = await outboundRequest(url, { headers, timeoutMs: PAGE_TIMEOUT_MS, maxBytes: MAX_PAGE_BYTES }, rt.outbound);
      return { status: res.status, headers: res.headers, body: res.body, truncated: res.truncated, url: res.url };
    },
  });

  const fetched = pages.flatMap((p) => (p.kind === 'fetched' ? [p] : []));
  const changed = await writeFiles(rt, scope, source.id, fetched.map((p) => ({ path: p.url, bytes: p.body, contentType: p.contentType, etag: p.etag, lastModified: p.lastModified })), [...existing.values()]);
  // A page not reached this time for a passing reason (304, 5xx, timeout) keeps what was indexed.
  const kept = new Set(pages.filter((p) => p.kind !== 'gone').map((p) => p.url));
  const gone = [...existing.values()].filter((f) => !kept.has(f.path));
  await deleteFiles(rt, scope, source.id, gone);
  const failed = pages.flatMap((p) => (p.kind === 'failed' ? [{ url: p.url, reason: p.reason }] : []));
  const crawled: NonNullable<KnowledgeSourceRecord['crawl']> = {
    at: isoNow(rt.clock),
    pages: pages.length,
    changed: changed.length,
    unchanged: pages.filter((p) => p.kind === 'unchanged').length,
    removed: gone.length,
    failed: failed.length,
    failures: failed.slice(0, 20),
  };
  await knowledgeSources.update(rt, scope, source.id, (current) => ({ ...current, crawl: crawled }));
  log.info('web source crawled', { tenantId: scope.tenantId, sourceId: source.id, pages: pages.length, changed: changed.length, gone: gone.length, failed: failed.length, firstFailure: failed[0] && `${failed[0].url}: ${failed[0].reason}` });
}
