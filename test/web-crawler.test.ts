import { describe, expect, it } from 'vitest';
import { crawl, type CrawlFetch, type CrawledPage, type FetchedResponse } from '../shared/knowledge/connectors/web-crawler';

/**
 * The crawler's rules on a site kept in memory (the fetch it is given answers from a map); the
 * real HTTP path, the outbound guard and conditional requests are in web-s3-sources.test.ts.
 */
function site(pages: Record<string, { status?: number; type?: string; body: string; headers?: Record<string, string> }>) {
  const asked: string[] = [];
  const fetch: CrawlFetch = async (url): Promise<FetchedResponse> => {
    asked.push(url);
    const page = pages[url];
    if (!page) return { status: 404, headers: {}, body: new Uint8Array(), truncated: false, url };
    const location = page.headers?.location;
    if (location) return { status: 200, headers: { 'content-type': 'text/html' }, body: Buffer.from(pages[location]!.body), truncated: false, url: location };
    return { status: page.status ?? 200, headers: { 'content-type': page.type ?? 'text/html', ...page.headers }, body: Buffer.from(page.body), truncated: false, url };
  };
  return { fetch, asked };
}

const html = (...links: string[]) => `<html><body>${links.map((l) => `<a href="${l}">x</a>`).join('')}</body></html>`;
const fetched = (pages: CrawledPage[]) => pages.filter((p) => p.kind === 'fetched').map((p) => p.url).sort();
const defaults = { sameSite: true, include: [], exclude: [], maxDepth: 5, maxPages: 100, concurrency: 2, known: new Map() };

describe('web crawler', () => {
  it('treats www and the bare host as one site, and leaves other hosts alone', async () => {
    const { fetch } = site({
      'https://example.com/': { body: html('https://www.example.com/about', 'https://other.example.org/') },
      'https://www.example.com/about': { body: html('/team') },
      'https://www.example.com/team': { body: html() },
    });
    expect(fetched(await crawl({ ...defaults, startUrls: ['https://example.com/'], fetch }))).toEqual(['https://example.com/', 'https://www.example.com/about', 'https://www.example.com/team']);
  });

  it('follows include and exclude globs, and the depth limit', async () => {
    const { fetch } = site({
      'https://d.test/': { body: html('/docs/a', '/docs/changelog', '/blog/post') },
      'https://d.test/docs/a': { body: html('/docs/b') },
      'https://d.test/docs/b': { body: html('/docs/c') },
      'https://d.test/docs/c': { body: html() },
      'https://d.test/docs/changelog': { body: html() },
      'https://d.test/blog/post': { body: html() },
    });
    const pages = await crawl({ ...defaults, startUrls: ['https://d.test/'], include: ['/', '/docs/*'], exclude: ['*/changelog*'], maxDepth: 2, fetch });
    expect(fetched(pages)).toEqual(['https://d.test/', 'https://d.test/docs/a', 'https://d.test/docs/b']);
  });

  it('honours robots.txt (without counting refused pages), noindex and nofollow, and stops at maxPages', async () => {
    const { fetch, asked } = site({
      'https://r.test/robots.txt': { type: 'text/plain', body: 'User-agent: *\nDisallow: /secret\n' },
      'https://r.test/': { body: html('/secret/x', '/hidden', '/closed', '/a', '/b', '/c') },
      'https://r.test/hidden': { body: '<html><head><meta name="robots" content="noindex"></head><body><a href="/from-hidden">x</a></body></html>' },
      'https://r.test/closed': { body: '<html><head><meta name="robots" content="nofollow"></head><body><a href="/never">x</a></body></html>' },
      'https://r.test/from-hidden': { body: html() },
      'https://r.test/a': { body: html() },
      'https://r.test/b': { body: html() },
      'https://r.test/c': { body: html() },
    });
    const pages = await crawl({ ...defaults, startUrls: ['https://r.test/'], maxPages: 6, concurrency: 1, fetch });
    expect(asked).not.toContain('https://r.test/secret/x');
    expect(asked).not.toContain('https://r.test/never');
    expect(pages.find((p) => p.url === 'https://r.test/hidden')).toEqual({ url: 'https://r.test/hidden', kind: 'gone', status: 200 });
    // Six pages taken (the refused one not counted): /, /hidden, /closed, /a, /b, /c; /from-hidden is left for a larger crawl.
    expect(fetched(pages)).toEqual(['https://r.test/', 'https://r.test/a', 'https://r.test/b', 'https://r.test/c', 'https://r.test/closed']);
  });

  it('reads a sitemap index and the sitemaps it lists', async () => {
    const { fetch } = site({
      'https://s.test/sitemap.xml': { type: 'application/xml', body: '<sitemapindex><sitemap><loc>https://s.test/sm-1.xml</loc></sitemap></sitemapindex>' },
      'https://s.test/sm-1.xml': { type: 'application/xml', body: '<urlset><url><loc>https://s.test/one</loc></url><url><loc>https://s.test/two</loc></url></urlset>' },
      'https://s.test/one': { body: html() },
      'https://s.test/two': { type: 'application/pdf', body: '%PDF-1.4' },
    });
    const pages = await crawl({ ...defaults, startUrls: [], sitemap: 'https://s.test/sitemap.xml', fetch });
    expect(fetched(pages)).toEqual(['https://s.test/one', 'https://s.test/two']);
    expect(pages.find((p) => p.url === 'https://s.test/two')).toMatchObject({ contentType: 'application/pdf' });
  });

  it('reports the sitemaps it could not read (refused by the guard, or missing) among the failures, and crawls the rest', async () => {
    const { fetch: base } = site({
      'https://s.test/sitemap.xml': { type: 'application/xml', body: '<sitemapindex><sitemap><loc>http://169.254.169.254/sm.xml</loc></sitemap><sitemap><loc>https://s.test/gone.xml</loc></sitemap></sitemapindex>' },
      'https://s.test/one': { body: html() },
    });
    const fetch: CrawlFetch = async (url, headers) => {
      if (url.startsWith('http://169.254.169.254')) throw new Error('169.254.169.254 is not a public address');
      return base(url, headers);
    };
    const pages = await crawl({ ...defaults, startUrls: ['https://s.test/one'], sitemap: 'https://s.test/sitemap.xml', fetch });
    expect(fetched(pages)).toEqual(['https://s.test/one']);
    expect(pages.filter((p) => p.kind === 'failed')).toEqual([
      { url: 'http://169.254.169.254/sm.xml', kind: 'failed', reason: 'sitemap: 169.254.169.254 is not a public address' },
      { url: 'https://s.test/gone.xml', kind: 'failed', reason: 'sitemap: HTTP 404' },
    ]);
  });
});
