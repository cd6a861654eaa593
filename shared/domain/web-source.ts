import { crawl, type KnownPage } from '../connectors/web-crawler';
import { log } from '../log';
import { outboundRequest } from '../net/outbound';
import type { Runtime } from '../runtime';
import type { StoredFile } from '../store/files';
import type { TenantScope } from '../tenancy';
import { eachLimited } from '../each-limited';
import { blobKeyOf, discardContents, fileEntry, newVersionId, readFileBytes, sha256Of } from './file-contents';
import { webConfigOf, type KnowledgeSourceRecord } from './knowledge-sources';

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
      const res = await outboundRequest(url, { headers, timeoutMs: PAGE_TIMEOUT_MS, maxBytes: MAX_PAGE_BYTES });
      return { status: res.status, headers: res.headers, body: res.body, truncated: res.truncated, url: res.url };
    },
  });

  const kept = new Set<string>();
  const written: StoredFile[] = [];
  const replaced: StoredFile[] = [];
  const fetched = pages.filter((p) => p.kind === 'fetched');
  await eachLimited(fetched, 8, async (page) => {
    kept.add(page.url);
    const previous = existing.get(page.url);
    const sha256 = sha256Of(page.body);
    if (previous?.sha256 === sha256 && previous.contentType === page.contentType) {
      // Same bytes under a new validator: keep the version, remember the validator.
      if (previous.etag !== page.etag || previous.lastModified !== page.lastModified) written.push({ ...previous, etag: page.etag, lastModified: page.lastModified });
      return;
    }
    const versionId = newVersionId();
    const blobKey = blobKeyOf(scope, source.id, versionId);
    await rt.blobs.files.put(blobKey, page.body, page.contentType);
    written.push({ ...fileEntry({ path: page.url, size: page.body.byteLength, sha256, contentType: page.contentType, versionId, blobKey }), etag: page.etag, lastModified: page.lastModified });
    if (previous) replaced.push(previous);
  });
  for (const page of pages) {
    // Not reached this time for a passing reason: keep what was indexed.
    if (page.kind === 'unchanged' || page.kind === 'failed') kept.add(page.url);
  }
  await rt.store.files.putFileEntries(scope, source.id, written);
  await discardContents(rt, scope, source.id, replaced);
  const gone = [...existing.values()].filter((f) => !kept.has(f.path));
  await rt.store.files.deleteFiles(scope, source.id, gone);
  await discardContents(rt, scope, source.id, gone);
  const failed = pages.flatMap((p) => (p.kind === 'failed' ? [{ url: p.url, reason: p.reason }] : []));
  const crawled: NonNullable<KnowledgeSourceRecord['crawl']> = {
    at: new Date().toISOString(),
    pages: pages.length,
    changed: written.length,
    unchanged: pages.filter((p) => p.kind === 'unchanged').length,
    removed: gone.length,
    failed: failed.length,
    failures: failed.slice(0, 20),
  };
  await rt.store.records.updateRecord<KnowledgeSourceRecord>(scope, 'KS', source.id, (current) => ({ ...current, crawl: crawled }));
  log.info('web source crawled', { tenantId: scope.tenantId, sourceId: source.id, pages: pages.length, changed: written.length, gone: gone.length, failed: failed.length, firstFailure: failed[0] && `${failed[0].url}: ${failed[0].reason}` });
}
