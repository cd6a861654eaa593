import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { makePdf } from './helpers/documents';
import { call } from './helpers/http';
import { newTenant, type TestTenant } from './helpers/tenant';
import { testLocal, testRt } from './helpers/runtime';

const app = createLocalApp(testRt);
const settle = () => testLocal.ingestion!.drain();

/** The help centre of a small shop, served by the test: pages, links, a sitemap, robots.txt, a PDF. */
function helpCentre() {
  const requests: Array<{ path: string; status: number; ua: string }> = [];
  const pages: Record<string, string> = {};
  let port = 0;
  const page = (title: string, main: string, links: string[] = []) =>
    `<html><head><title>${title}</title></head><body><nav><a href="/">Home</a> Shop menu navigation</nav>` +
    `<main><h1>${title}</h1>${main}${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</main><footer>Copyright footer text</footer></body></html>`;
  pages['/'] = page('Help centre', '<p>Welcome to the help centre.</p>', ['/guide/faq', '/private/salaries', '/go-internal', 'http://elsewhere.example/', '/old-page', '/docs/manual.pdf#page=2']);
  pages['/guide/faq'] = page('FAQ', '<p>Orders ship from the Rotterdam warehouse within two days.</p>', ['/guide/deep/one']);
  pages['/guide/deep/one'] = page('Deep one', '<p>One level down.</p>', ['/guide/deep/two']);
  pages['/guide/deep/two'] = page('Deep two', '<p>Too deep to be crawled at depth two.</p>');
  pages['/guide/install'] = page('Installing the app', '<p>Scan the QR code on the box to install the companion app.</p>');
  pages['/private/salaries'] = page('Salaries', '<p>Confidential salary table.</p>');
  pages['/old-page'] = page('Old page', '<p>The retired loyalty programme.</p>');
  let pdf: Uint8Array = new Uint8Array();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const answer = (status: number, headers: Record<string, string>, body: string | Uint8Array = '') => {
      requests.push({ path, status, ua: String(req.headers['user-agent']) });
      res.writeHead(status, headers).end(body);
    };
    if (path === '/robots.txt') return answer(200, { 'content-type': 'text/plain' }, 'User-agent: *\nDisallow: /private/\n');
    if (path === '/sitemap.xml') {
      return answer(200, { 'content-type': 'application/xml' }, `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://localhost:${port}/guide/install</loc></url></urlset>`);
    }
    // A link that redirects to the machine's own private address: the outbound guard refuses it.
    if (path === '/go-internal') return answer(302, { location: `http://127.0.0.1:${port}/guide/faq` });
    if (path === '/docs/manual.pdf') return answer(200, { 'content-type': 'application/pdf' }, pdf);
    const html = pages[path];
    if (!html) return answer(404, { 'content-type': 'text/html' }, 'not found');
    const etag = `"${createHash('sha1').update(html).digest('hex')}"`;
    if (req.headers['if-none-match'] === etag) return answer(304, { etag });
    return answer(200, { 'content-type': 'text/html; charset=utf-8', etag }, html);
  });
  const state = {
    url: '',
    requests,
    pages,
  };
  beforeAll(async () => {
    pdf = await makePdf([{ heading: 'Safety', lines: ['Unplug the charger before cleaning.'] }, { heading: 'Battery', lines: ['The battery holds 80 percent after 500 cycles.'] }]);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
    state.url = `http://localhost:${port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return state;
}

describe('web sources', () => {
  const site = helpCentre();
  let t: TestTenant;
  let id: string;
  const search = async (query: string) => (await call(app, 'POST', `/v1/knowledge-sources/${id}/search`, { key: t.apiKey, body: { query } })).body.data.results;
  const source = async () => (await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey })).body.data;

  beforeAll(async () => {
    t = await newTenant();
    const created = await call(app, 'POST', '/v1/knowledge-sources', {
      key: t.apiKey,
      body: { name: 'Help centre', type: 'web', config: { startUrls: [`${site.url}/`], sitemap: `${site.url}/sitemap.xml`, maxDepth: 2 } },
    });
    expect(created.status).toBe(201);
    id = created.body.data.id;
    expect((await call(app, 'POST', `/v1/knowledge-sources/${id}/connect`, { key: t.apiKey, body: {} })).status).toBe(202);
    await settle();
  });

  it('crawls the site from its start URL and sitemap, within depth, honouring robots.txt and staying on the site', async () => {
    const got = await source();
    expect(got.status).toBe('ready');
    const paths = got.files.map((f: { path: string }) => f.path.replace(site.url, '')).sort();
    expect(paths).toEqual(['/', '/docs/manual.pdf', '/guide/deep/one', '/guide/faq', '/guide/install', '/old-page']);
    expect(site.requests.some((r) => r.path.startsWith('/private/'))).toBe(false);
    expect(site.requests.find((r) => r.path === '/')?.ua).toMatch(/^CairnBot/);
  });

  it('refuses a redirect to a private address and says so in the crawl report', async () => {
    const { crawl } = await source();
    expect(crawl).toMatchObject({ failed: 1 });
    expect(crawl.failures[0].url).toBe(`${site.url}/go-internal`);
    expect(crawl.failures[0].reason).toMatch(/127\.0\.0\.1|not allowed|refused/i);
  });

  it('indexes pages’ main content, not their navigation, and documents they link to with their pages', async () => {
    expect((await search('Rotterdam warehouse ship'))[0]).toMatchObject({ path: `${site.url}/guide/faq`, title: 'FAQ' });
    expect((await search('QR code companion app'))[0].path).toBe(`${site.url}/guide/install`);
    expect(await search('shop menu navigation copyright footer')).toEqual([]);
    expect((await search('battery cycles'))[0]).toMatchObject({ path: `${site.url}/docs/manual.pdf`, location: { page: 2 } });
  });

  it('re-syncs with conditional requests: unchanged pages answer 304, a changed page is re-read, a removed one leaves', async () => {
    site.requests.length = 0;
    site.pages['/guide/faq'] = site.pages['/guide/faq']!.replace('Rotterdam warehouse within two days', 'Antwerp warehouse within three days');
    delete site.pages['/old-page'];
    await call(app, 'POST', `/v1/knowledge-sources/${id}/connect`, { key: t.apiKey, body: {} });
    await settle();
    expect(site.requests.filter((r) => r.status === 304).map((r) => r.path).sort()).toEqual(['/', '/guide/deep/one', '/guide/install']);
    expect((await search('Antwerp warehouse'))[0].path).toBe(`${site.url}/guide/faq`);
    expect(await search('Rotterdam')).toEqual([]);
    const got = await source();
    expect(got.files.map((f: { path: string }) => f.path)).not.toContain(`${site.url}/old-page`);
    // The PDF is fetched again (its server sends no validator) but its bytes are the same: not a change.
    expect(got.crawl).toMatchObject({ changed: 1, unchanged: 3, removed: 1 });
    expect(await search('retired loyalty programme')).toEqual([]);
  });

  it('validates its settings, naming the field', async () => {
    const bad = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'x', type: 'web', config: { startUrls: ['ftp://example.com/'] } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('config.startUrls[0]');
    const none = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'x', type: 'web', config: {} } });
    expect(none.body.error.details.field).toBe('config.startUrls');
    const files = await call(app, 'POST', `/v1/knowledge-sources/${id}/files`, { key: t.apiKey, body: { files: [{ path: 'a.txt', content: 'x' }] } });
    expect(files.status).toBe(400);
  });
});

describe('s3 sources', () => {
  const bucket = testRt.blobs.bucket('cairn-test-documents');
  const prefix = `handbook-${randomBytes(4).toString('hex')}/`;
  let t: TestTenant;
  let id: string;
  const search = async (query: string) => (await call(app, 'POST', `/v1/knowledge-sources/${id}/search`, { key: t.apiKey, body: { query } })).body.data.results;
  const resync = async () => {
    await call(app, 'POST', `/v1/knowledge-sources/${id}/connect`, { key: t.apiKey, body: {} });
    await settle();
  };

  beforeAll(async () => {
    t = await newTenant();
    await bucket.put(`${prefix}travel.md`, Buffer.from('# Travel\n\nTrain tickets over 300 euros need a manager’s approval.'), 'text/markdown');
    await bucket.put(`${prefix}equipment/laptops.pdf`, await makePdf([{ heading: 'Laptops', lines: ['Laptops are replaced every four years.'] }]), 'application/pdf');
    await bucket.put('elsewhere/ignored.md', Buffer.from('# Outside the prefix\n\nNot part of the handbook.'), 'text/markdown');
    id = (await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'Handbook', type: 's3', config: { bucket: 'cairn-test-documents', prefix } } })).body.data.id;
    await resync();
  });

  it('indexes the objects under the prefix, with their keys and pages', async () => {
    const got = (await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey })).body.data;
    expect(got.status).toBe('ready');
    expect(got.files.map((f: { path: string }) => f.path).sort()).toEqual([`${prefix}equipment/laptops.pdf`, `${prefix}travel.md`]);
    expect(got.files[0].etag).toMatch(/^[0-9a-f]{32}$/);
    expect((await search('train tickets approval'))[0].path).toBe(`${prefix}travel.md`);
    expect((await search('laptops replaced'))[0]).toMatchObject({ path: `${prefix}equipment/laptops.pdf`, location: { page: 1 } });
    expect(await search('outside the prefix handbook')).toEqual([]);
  });

  it('re-reads only objects whose ETag changed, and drops deleted ones', async () => {
    const before = (await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey })).body.data.files;
    await bucket.put(`${prefix}travel.md`, Buffer.from('# Travel\n\nTrain tickets over 500 euros need a director’s approval.'), 'text/markdown');
    await bucket.delete([`${prefix}equipment/laptops.pdf`]);
    await resync();
    const after = (await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey })).body.data.files;
    expect(after).toHaveLength(1);
    expect(after[0].etag).not.toBe(before.find((f: { path: string }) => f.path === `${prefix}travel.md`).etag);
    expect((await search('director approval'))[0].path).toBe(`${prefix}travel.md`);
    expect(await search('laptops replaced')).toEqual([]);
  });

  it('refuses a bucket the deployment was not granted, naming the field', async () => {
    const res = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'x', type: 's3', config: { bucket: 'someone-elses-bucket' } } });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe('config.bucket');
    expect(res.body.error.message).toMatch(/s3SourceBuckets/);
  });
});
