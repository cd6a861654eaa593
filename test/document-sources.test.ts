import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { sourceBlobPrefix } from '../shared/knowledge/file-contents';
import { parsingIsolated } from '../shared/knowledge/documents/parse-isolated';
import { makeDocx, makeEncryptedPdf, makePdf, makePptx, makeXlsx } from './helpers/documents';
import { call } from './helpers/http';
import { newTenant, type TestTenant } from './helpers/tenant';
import { testLocal, testRt } from './helpers/runtime';

const app = createLocalApp(testRt);
const settle = () => testLocal.ingestion!.drain();
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

const manual = () =>
  makePdf(
    [
      { heading: 'Installation', lines: ['Mount the pump on a level concrete floor.', 'Connect the inlet hose before the outlet hose.'] },
      { heading: 'Maintenance', lines: ['Replace the valve seal every 2,000 operating hours.', 'Grease the bearings once a month.'] },
      { heading: 'Warranty', lines: ['The warranty lasts 24 months from the date of delivery.'] },
    ],
    { title: 'PX-200 pump manual' },
  );

async function blobKeys(t: TestTenant, sourceId: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const blob of testRt.blobs.files.list(sourceBlobPrefix(t.scope, sourceId))) keys.push(blob.key);
  return keys;
}

/** A multipart request as `curl -F` sends it (with its length, as every HTTP client does). */
async function multipart(t: TestTenant, path: string, parts: Array<{ filename: string; bytes: Uint8Array; type?: string }>) {
  const form = new FormData();
  for (const part of parts) form.append('file', new Blob([part.bytes], { type: part.type ?? 'application/octet-stream' }), part.filename);
  const encoded = new Response(form);
  const body = Buffer.from(await encoded.arrayBuffer());
  return app.request(`http://localhost${path}`, {
    method: 'POST',
    headers: { 'x-api-key': t.apiKey, 'content-type': encoded.headers.get('content-type')!, 'content-length': String(body.length) },
    body,
  });
}

describe('documents in a file collection', () => {
  let t: TestTenant;
  let id: string;
  beforeAll(async () => {
    t = await newTenant();
    const created = await call(app, 'POST', '/v1/knowledge-sources', {
      key: t.apiKey,
      body: { name: 'Manuals', type: 'file-collection', files: [{ path: 'manuals/pump.pdf', contentBase64: b64(await manual()) }] },
    });
    expect(created.status).toBe(201);
    id = created.body.data.id;
    const added = await multipart(t, `/v1/knowledge-sources/${id}/files`, [
      { filename: 'policies/returns.docx', bytes: await makeDocx({ title: 'Returns policy', sections: [{ heading: 'Time limits', paragraphs: ['Unused parts can be returned within 45 days.'] }] }) },
      { filename: 'decks/roadmap.pptx', bytes: await makePptx([{ title: 'Roadmap', body: ['Ship the PX-300 in autumn.'] }, { title: 'Hiring', body: ['We are hiring four field engineers in Porto.'] }]) },
      { filename: 'data/parts.xlsx', bytes: await makeXlsx([{ name: 'Spare parts', rows: [['Part', 'Price (EUR)'], ['Valve seal', 12.5], ['Bearing kit', 48]] }]) },
      { filename: 'secret/board.pdf', bytes: makeEncryptedPdf() },
    ]);
    expect(added.status).toBe(200);
    expect(((await added.json()) as { data: { fileCount: number } }).data.fileCount).toBe(5);
    expect((await call(app, 'POST', `/v1/knowledge-sources/${id}/connect`, { key: t.apiKey, body: {} })).status).toBe(202);
    await settle();
  });

  it('keeps the files’ content in the blob store, one object per file', async () => {
    expect(await blobKeys(t, id)).toHaveLength(5);
    const got = await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey });
    expect(got.body.data.files.find((f: { path: string }) => f.path === 'manuals/pump.pdf')).toMatchObject({ contentType: 'application/pdf', size: expect.any(Number) });
  });

  it('indexes every readable document and reports the one it could not read, on the file', async () => {
    const got = await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey });
    expect(got.body.data.status).toBe('ready');
    const byPath = Object.fromEntries(got.body.data.files.map((f: { path: string }) => [f.path, f]));
    expect(byPath['secret/board.pdf'].error).toEqual({ code: 'ENCRYPTED_DOCUMENT', message: 'The PDF is password-protected' });
    for (const path of ['manuals/pump.pdf', 'policies/returns.docx', 'decks/roadmap.pptx', 'data/parts.xlsx']) expect(byPath[path].error).toBeUndefined();
    // They were read in a worker thread (bounded heap and time), not in the worker's own thread.
    expect(parsingIsolated()).toBe(true);
  });

  it('cites the page, slide or sheet of what it finds', async () => {
    const search = async (query: string) => (await call(app, 'POST', `/v1/knowledge-sources/${id}/search`, { key: t.apiKey, body: { query } })).body.data.results[0];
    expect(await search('how often replace the valve seal')).toMatchObject({ path: 'manuals/pump.pdf', location: { page: 2 }, title: 'PX-200 pump manual › Maintenance' });
    expect(await search('field engineers Porto')).toMatchObject({ path: 'decks/roadmap.pptx', location: { slide: 2 } });
    expect(await search('bearing kit price')).toMatchObject({ path: 'data/parts.xlsx', location: { sheet: 'Spare parts' } });
    expect((await search('return unused parts days')).path).toBe('policies/returns.docx');
  });

  it('lets an agent answer from the PDF, citing its page', async () => {
    const agent = (
      await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Pump support', model: 'gpt-4', capabilities: ['chat', 'document-search'], knowledgeSourceIds: [id] } })
    ).body.data.id;
    const res = await call(app, 'POST', `/v1/agents/${agent}/converse`, { key: t.apiKey, body: { message: 'How long does the warranty of the pump last?' } });
    expect(res.status).toBe(200);
    expect(res.body.data.reply).toMatch(/24 months/);
    expect(res.body.data.sources[0]).toMatchObject({ knowledgeSourceId: id, path: 'manuals/pump.pdf', location: { page: 3 } });
  });

  it('re-indexes a replaced file and clears its error; removing it removes its content', async () => {
    const fixed = await makePdf([{ heading: 'Board minutes', lines: ['The board approved the Porto office budget.'] }]);
    await call(app, 'POST', `/v1/knowledge-sources/${id}/files`, { key: t.apiKey, body: { files: [{ path: 'secret/board.pdf', contentBase64: b64(fixed) }] } });
    await settle();
    const got = await call(app, 'GET', `/v1/knowledge-sources/${id}`, { key: t.apiKey });
    expect(got.body.data.files.find((f: { path: string }) => f.path === 'secret/board.pdf').error).toBeUndefined();
    const found = await call(app, 'POST', `/v1/knowledge-sources/${id}/search`, { key: t.apiKey, body: { query: 'board approved budget' } });
    expect(found.body.data.results[0]).toMatchObject({ path: 'secret/board.pdf', location: { page: 1 } });
    expect(await blobKeys(t, id)).toHaveLength(5); // the replaced version's object is gone

    await call(app, 'DELETE', `/v1/knowledge-sources/${id}/files?path=secret%2Fboard.pdf`, { key: t.apiKey });
    expect(await blobKeys(t, id)).toHaveLength(4);
  });

  it('deleting the source deletes every object of it', async () => {
    const other = (await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'Temp', type: 'file-collection', files: [{ path: 'a.txt', content: 'alpha' }] } })).body.data.id;
    expect(await blobKeys(t, other)).toHaveLength(1);
    expect((await call(app, 'DELETE', `/v1/knowledge-sources/${other}`, { key: t.apiKey })).status).toBe(200);
    await settle();
    expect(await blobKeys(t, other)).toHaveLength(0);
  });
});

describe('file requests', () => {
  let t: TestTenant;
  let id: string;
  beforeAll(async () => {
    t = await newTenant();
    id = (await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'Docs', type: 'file-collection' } })).body.data.id;
  });

  it('names the field of a bad file: both or neither content, bad base64, a bad multipart filename', async () => {
    const both = await call(app, 'POST', `/v1/knowledge-sources/${id}/files`, { key: t.apiKey, body: { files: [{ path: 'a.txt', content: 'x', contentBase64: 'eA==' }] } });
    expect(both.status).toBe(400);
    expect(both.body.error.details.field).toBe('files[0].content');
    const neither = await call(app, 'POST', `/v1/knowledge-sources/${id}/files`, { key: t.apiKey, body: { files: [{ path: 'a.txt' }] } });
    expect(neither.body.error.details.field).toBe('files[0].content');
    const bad = await call(app, 'POST', `/v1/knowledge-sources/${id}/files`, { key: t.apiKey, body: { files: [{ path: 'a.pdf', contentBase64: 'not base64!' }] } });
    expect(bad.body.error.details.field).toBe('files[0].contentBase64');
    const escaping = await multipart(t, `/v1/knowledge-sources/${id}/files`, [{ filename: '../etc/passwd', bytes: Buffer.from('x') }]);
    expect(escaping.status).toBe(400);
    expect(((await escaping.json()) as { error: { details: { field: string } } }).error.details.field).toBe('file[0].filename');
    const elsewhere = await multipart(t, '/v1/knowledge-sources', [{ filename: 'a.txt', bytes: Buffer.from('x') }]);
    expect(elsewhere.status).toBe(415);
    expect(((await elsewhere.json()) as { error: { code: string } }).error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    const empty = await call(app, 'POST', `/v1/knowledge-sources/${id}/files`, { key: t.apiKey, body: {} });
    expect(empty.status).toBe(400);
    expect(empty.body.error.details.field).toBe('files');
  });

  it('refuses an embedding model or reranker whose provider has no credentials here, naming the field', async () => {
    const embedding = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'x', type: 'file-collection', embedding: { model: 'openai/text-embedding-3-small' } } });
    expect(embedding.status).toBe(400);
    expect(embedding.body.error).toMatchObject({ details: { field: 'embedding.model' }, message: expect.stringMatching(/openai provider, which has no credentials/) });
    const rerank = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'x', type: 'file-collection', rerank: { model: 'cohere/rerank-v3.5' } } });
    expect(rerank.body.error.details.field).toBe('rerank.model');
  });

  it('refuses more than 5 MB of content in one request and points to uploads', async () => {
    const text = 'a'.repeat(5 * 1024 * 1024 + 1);
    const res = await call(app, 'POST', `/v1/knowledge-sources/${id}/files`, { key: t.apiKey, body: { files: [{ path: 'big.txt', content: text }] } });
    expect(res.status).toBe(413);
    expect(res.body.error.details).toMatchObject({ field: 'files', limitBytes: 5 * 1024 * 1024 });
    const encoded = await call(app, 'POST', `/v1/knowledge-sources/${id}/files`, { key: t.apiKey, body: { files: [{ path: 'big.bin', contentBase64: Buffer.from(text).toString('base64') }] } });
    expect(encoded.status).toBe(413);
  });
});

describe('uploads of large files through presigned URLs', () => {
  let t: TestTenant;
  let id: string;
  beforeAll(async () => {
    t = await newTenant();
    id = (await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'Big files', type: 'file-collection' } })).body.data.id;
    await call(app, 'POST', `/v1/knowledge-sources/${id}/connect`, { key: t.apiKey, body: {} });
    await settle();
  });

  const start = (body: unknown) => call(app, 'POST', `/v1/knowledge-sources/${id}/uploads`, { key: t.apiKey, body });
  const complete = (uploadId: string) => call(app, 'POST', `/v1/knowledge-sources/${id}/uploads/${uploadId}/complete`, { key: t.apiKey });

  it('takes a file larger than a request may carry: PUT to the blob store, complete, indexed', async () => {
    // 7 MB of text: over the 5 MB a request may carry, with one sentence to find in the middle.
    const filler = 'Routine log line without anything of note. '.repeat(80_000);
    const text = `Pump logbook\n\n${filler}\n\nOn 3 March the technician found a cracked impeller in pump seven.\n\n${filler}`;
    const ticket = await start({ path: 'logs/pump-log.txt', size: Buffer.byteLength(text) });
    expect(ticket.status).toBe(201);
    expect(ticket.body.data).toMatchObject({ uploadId: expect.stringMatching(/^upl_/), method: 'PUT', headers: { 'content-type': 'text/plain' } });
    const { uploadId, url, headers } = ticket.body.data;

    expect((await complete(uploadId)).status).toBe(409); // nothing PUT yet
    const put = await fetch(url, { method: 'PUT', headers, body: text });
    expect(put.status).toBe(200);
    const done = await complete(uploadId);
    expect(done.status).toBe(200);
    expect(done.body.data.status).toBe('pending');
    expect(done.body.data.files).toEqual([expect.objectContaining({ path: 'logs/pump-log.txt', size: Buffer.byteLength(text), contentType: 'text/plain' })]);
    expect((await complete(uploadId)).body.data.files).toHaveLength(1); // idempotent
    await settle();
    const found = await call(app, 'POST', `/v1/knowledge-sources/${id}/search`, { key: t.apiKey, body: { query: 'cracked impeller' } });
    expect(found.body.data.results[0]).toMatchObject({ path: 'logs/pump-log.txt' });
    expect(found.body.data.results[0].text).toContain('cracked impeller in pump seven');
    // The upload's own object is gone: only the file's version remains.
    expect(await blobKeys(t, id)).toHaveLength(1);
  });

  it('uploads a PDF and cites its pages', async () => {
    const pdf = await manual();
    const { uploadId, url, headers } = (await start({ path: 'manuals/px200.pdf', size: pdf.byteLength })).body.data;
    expect(headers).toEqual({ 'content-type': 'application/pdf' });
    await fetch(url, { method: 'PUT', headers, body: pdf });
    await complete(uploadId);
    await settle();
    const found = await call(app, 'POST', `/v1/knowledge-sources/${id}/search`, { key: t.apiKey, body: { query: 'grease the bearings' } });
    expect(found.body.data.results[0]).toMatchObject({ path: 'manuals/px200.pdf', location: { page: 2 } });
  });

  it('refuses more than 100 MB, names the field, and 404s an unknown upload', async () => {
    const big = await start({ path: 'huge.pdf', size: 100 * 1024 * 1024 + 1 });
    expect(big.status).toBe(413);
    expect(big.body.error.details.field).toBe('size');
    expect((await start({ path: '/abs.pdf', size: 10 })).body.error.details.field).toBe('path');
    expect((await complete('upl_00000000000000000000000000')).status).toBe(404);
  });
});
