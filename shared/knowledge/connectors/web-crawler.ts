import { Parser } from 'htmlparser2';
import robotsParser from 'robots-parser';

/**
 * A polite, bounded crawler: start URLs and/or a sitemap, breadth first to `maxDepth`, at most
 * `maxPages` pages, `concurrency` requests at once (slower where robots.txt asks for a delay),
 * robots.txt honoured, links followed on the start hosts only (unless told otherwise) and through
 * include/exclude globs. Pages known from an earlier crawl are asked for conditionally (ETag,
 * Last-Modified). Every request goes through the `fetch` it is given: the product's outbound guard.
 */

export const CRAWLER_AGENT = 'CairnBot';
/** The longest crawl delay honoured: a site asking for more is crawled at this pace. */
const MAX_CRAWL_DELAY_MS = 5_000;
/** Sitemap indexes are followed this many sitemaps deep in all. */
const MAX_SITEMAPS = 20;

export interface FetchedResponse {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
  truncated: boolean;
  /** The URL that answered, after redirects. */
  url: string;
}

export type CrawlFetch = (url: string, headers: Record<string, string>) => Promise<FetchedResponse>;

export interface KnownPage {
  etag?: string;
  lastModified?: string;
  /** The content stored from the last crawl, for the links of a page that did not change. */
  body(): Promise<Uint8Array>;
}

export interface CrawlOptions {
  startUrls: string[];
  sitemap?: string;
  sameSite: boolean;
  include: string[];
  exclude: string[];
  maxDepth: number;
  maxPages: number;
  concurrency: number;
  known: Map<string, KnownPage>;
  fetch: CrawlFetch;
}

export type CrawledPage =
  | { url: string; kind: 'fetched'; contentType: string; body: Uint8Array; etag?: string; lastModified?: string }
  | { url: string; kind: 'unchanged' }
  | { url: string; kind: 'gone'; status: number }
  | { url: string; kind: 'failed'; reason: string };

/** A URL without its fragment, the form pages are known by. */
export function canonical(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
    parsed.hash = '';
    return parsed.toString();
  } catch {
    return undefined;
  }
}

/** The site a host belongs to for `sameSite`: www.example.com and example.com are one site. */
const siteOf = (host: string) => host.toLowerCase().replace(/^www\./, '');

/** `*` matches any characters; everything else literally; matched against the path and query. */
function globMatcher(patterns: string[]): (url: URL) => boolean {
  const regexes = patterns.map((p) => new RegExp(`^${p.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`));
  return (url) => regexes.some((r) => r.test(url.pathname + url.search));
}

const HTML = /^(text\/html|application\/xhtml\+xml)/i;

/** The links of an HTML page (resolved against it and its <base>), unless it asks robots not to follow them. */
export function linksOf(html: string, pageUrl: string): { links: string[]; noindex: boolean } {
  const links: string[] = [];
  let base = pageUrl;
  let nofollow = false;
  let noindex = false;
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === 'base' && attributes.href) base = new URL(attributes.href, pageUrl).toString();
        if (name === 'meta' && /^(robots|cairnbot)$/i.test(attributes.name ?? '')) {
          const content = (attributes.content ?? '').toLowerCase();
          if (content.includes('nofollow') || content.includes('none')) nofollow = true;
          if (content.includes('noindex') || content.includes('none')) noindex = true;
        }
        if ((name === 'a' || name === 'area') && attributes.href && !/\bnofollow\b/i.test(attributes.rel ?? '')) {
          try {
            links.push(new URL(attributes.href, base).toString());
          } catch {
            // not a URL: skipped
          }
        }
      },
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();
  return { links: nofollow ? [] : links, noindex };
}

/** The <loc> URLs of a sitemap, and whether it is an index of sitemaps. */
export function sitemapUrls(xml: string): { urls: string[]; index: boolean } {
  const urls: string[] = [];
  let inLoc = false;
  let index = false;
  let text = '';
  const parser = new Parser(
    {
      onopentag(name) {
        if (name.endsWith('sitemapindex')) index = true;
        if (name === 'loc' || name.endsWith(':loc')) {
          inLoc = true;
          text = '';
        }
      },
      ontext(data) {
        if (inLoc) text += data;
      },
      onclosetag(name) {
        if (name === 'loc' || name.endsWith(':loc')) {
          inLoc = false;
          if (text.trim()) urls.push(text.trim());
        }
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.write(xml);
  parser.end();
  return { urls, index };
}

const text = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');

/** Crawls and reports every page it reached, in the order it reached them. */
export async function crawl(options: CrawlOptions): Promise<CrawledPage[]> {
  const included = options.include.length > 0 ? globMatcher(options.include) : () => true;
  const excluded = globMatcher(options.exclude);
  const hosts = new Set<string>();
  const robots = new Map<string, Promise<{ allowed(url: string): boolean; delayMs: number }>>();
  const seen = new Set<string>();
  const queue: Array<{ url: string; depth: number }> = [];
  const results: CrawledPage[] = [];
  let pages = 0;

  const robotsOf = (origin: string) => {
    let rules = robots.get(origin);
    if (!rules) {
      rules = (async () => {
        const url = `${origin}/robots.txt`;
        try {
          const res = await options.fetch(url, {});
          // No robots.txt (or one that errs): everything is allowed, as crawlers agree.
          const parsed = robotsParser(url, res.status === 200 ? text(res.body) : '');
          const delay = parsed.getCrawlDelay(CRAWLER_AGENT);
          return { allowed: (u: string) => parsed.isAllowed(u, CRAWLER_AGENT) !== false, delayMs: Math.min(MAX_CRAWL_DELAY_MS, (delay ?? 0) * 1000) };
        } catch {
          return { allowed: () => true, delayMs: 0 };
        }
      })();
      robots.set(origin, rules);
    }
    return rules;
  };

  const admit = (raw: string, depth: number) => {
    const url = canonical(raw);
    if (!url || seen.has(url)) return;
    const parsed = new URL(url);
    if (options.sameSite && !hosts.has(siteOf(parsed.host))) return;
    if (!included(parsed) || excluded(parsed)) return;
    seen.add(url);
    queue.push({ url, depth });
  };

  for (const start of options.startUrls) {
    const url = canonical(start);
    if (url) hosts.add(siteOf(new URL(url).host));
  }
  if (options.sitemap) {
    hosts.add(siteOf(new URL(options.sitemap).host));
    const sitemap = await sitemapEntries(options.sitemap, options.fetch);
    // A sitemap that could not be read (refused, unreachable, not there) is reported with the pages.
    for (const failure of sitemap.failures) results.push({ url: failure.url, kind: 'failed', reason: `sitemap: ${failure.reason}` });
    for (const url of sitemap.urls) admit(url, 0);
  }
  for (const start of options.startUrls) admit(start, 0);

  /** Visits a page; false when robots.txt keeps it out (it does not count as a page). */
  const visit = async ({ url, depth }: { url: string; depth: number }): Promise<boolean> => {
    const origin = new URL(url).origin;
    const rules = await robotsOf(origin);
    if (!rules.allowed(url)) return false;
    if (rules.delayMs > 0) await new Promise((r) => setTimeout(r, rules.delayMs));
    const known = options.known.get(url);
    const headers: Record<string, string> = { 'user-agent': `${CRAWLER_AGENT}/1.0 (+https://github.com/cairn)`, accept: 'text/html,application/xhtml+xml,application/pdf,*/*;q=0.5' };
    if (known?.etag) headers['if-none-match'] = known.etag;
    if (known?.lastModified) headers['if-modified-since'] = known.lastModified;
    let res: FetchedResponse;
    try {
      res = await options.fetch(url, headers);
    } catch (error) {
      results.push({ url, kind: 'failed', reason: (error as Error).message });
      return true;
    }
    const landed = canonical(res.url) ?? url;
    // A redirect off the site leaves it (and a redirect to a private address never got here).
    if (landed !== url && options.sameSite && !hosts.has(siteOf(new URL(landed).host))) {
      results.push({ url, kind: 'failed', reason: `redirected off the site to ${landed}` });
      return true;
    }
    let body: Uint8Array;
    if (res.status === 304 && known) {
      results.push({ url, kind: 'unchanged' });
      body = await known.body();
    } else if (res.status === 404 || res.status === 410) {
      results.push({ url, kind: 'gone', status: res.status });
      return true;
    } else if (res.status !== 200 || res.truncated) {
      results.push({ url, kind: 'failed', reason: res.truncated ? 'the page is larger than the crawler reads' : `HTTP ${res.status}` });
      return true;
    } else {
      body = res.body;
    }
    const contentType = res.headers['content-type'] ?? 'application/octet-stream';
    const html = res.status === 304 ? HTML.test(contentType) || looksLikeHtml(body) : HTML.test(contentType);
    const found = html ? linksOf(text(body), landed) : { links: [], noindex: false };
    if (res.status === 200) {
      if (found.noindex) results.push({ url, kind: 'gone', status: 200 });
      else results.push({ url, kind: 'fetched', contentType: contentType.split(';')[0]!.trim(), body, etag: res.headers.etag, lastModified: res.headers['last-modified'] });
    }
    if (depth < options.maxDepth) for (const link of found.links) admit(link, depth + 1);
    return true;
  };

  // Breadth first with `concurrency` workers; a page is counted when it is taken from the queue.
  const worker = async () => {
    while (queue.length > 0 && pages < options.maxPages) {
      const next = queue.shift()!;
      pages++;
      if (!(await visit(next))) pages--;
    }
  };
  while (queue.length > 0 && pages < options.maxPages) {
    await Promise.all(Array.from({ length: options.concurrency }, worker));
  }
  return results;
}

const looksLikeHtml = (body: Uint8Array) => /<(html|body|a\s)/i.test(text(body.subarray(0, 2048)));

/** The page URLs of a sitemap, following a sitemap index (bounded), and the sitemaps that could not be read. */
async function sitemapEntries(sitemap: string, fetch: CrawlFetch): Promise<{ urls: string[]; failures: Array<{ url: string; reason: string }> }> {
  const pending = [sitemap];
  const urls: string[] = [];
  const failures: Array<{ url: string; reason: string }> = [];
  for (let read = 0; pending.length > 0 && read < MAX_SITEMAPS; read++) {
    const url = pending.shift()!;
    try {
      const res = await fetch(url, {});
      if (res.status !== 200) {
        failures.push({ url, reason: `HTTP ${res.status}` });
        continue;
      }
      const { urls: locs, index } = sitemapUrls(text(res.body));
      if (index) pending.push(...locs);
      else urls.push(...locs);
    } catch (error) {
      // It adds no pages; the start URLs still count.
      failures.push({ url, reason: (error as Error).message });
    }
  }
  return { urls, failures };
}
