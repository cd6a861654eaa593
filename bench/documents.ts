/**
 * `npm run bench` (documents): how fast documents are read, and what hybrid search costs.
 * - Parse throughput per format (MB/s of file, and of text out), against the plain-text reading of
 *   the same text in the same run (the ratio is what to quote: the machine is shared).
 * - A 200-page PDF uploaded through a presigned URL and indexed: seconds from completing the upload
 *   to ready, pages per second, DynamoDB requests per page.
 * - A 3.7 MB text file uploaded the same way: seconds from completing the upload to ready.
 * - Hybrid search over 1,000 CISI documents embedded by the wire-level stand-in provider: extra
 *   DynamoDB requests and read units per query against lexical search of the same source, and the
 *   latency ratio (the provider's own time excluded: it answers from this machine).
 * Writes bench/results/documents.json.
 */
import { makeDocx, makePdf, makePptx, makeXlsx } from '../test/helpers/documents';
import { startRetrievalProviders } from '../test/helpers/retrieval-providers';
import { benchApp, cisi, mean, percentile, runBench, startBenchServices, writeResults } from './common';

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

async function main() {
  const providers = await startRetrievalProviders();
  Object.assign(process.env, { BEDROCK_REGION: 'us-east-1', BEDROCK_ENDPOINT: providers.url, AWS_ACCESS_KEY_ID: 'AKIDBENCH', AWS_SECRET_ACCESS_KEY: 'bench', SEARCH_CACHE_MB: '0' });
  const services = await startBenchServices('cairn-bench');
  const { parseDocument } = await import('../shared/knowledge/documents/parse-document');
  const { parseLimits } = await import('../shared/knowledge/documents/parse-limits');
  const { corpus, queries, sentences } = cisi();
  const results: Record<string, unknown> = { date: new Date().toISOString(), node: process.version };

  // --- Parse throughput -------------------------------------------------------------------------
  const paragraphs = (n: number, offset: number) => Array.from({ length: n }, (_, i) => sentences[(offset + i) % sentences.length]!);
  const pdfPages = Array.from({ length: 50 }, (_, p) => ({ heading: `Section ${p + 1}`, lines: paragraphs(40, p * 40).map((s) => s.slice(0, 95)) }));
  const files = {
    pdf: await makePdf(pdfPages),
    docx: await makeDocx({ title: 'CISI', sections: Array.from({ length: 60 }, (_, s) => ({ heading: `Part ${s + 1}`, paragraphs: paragraphs(30, s * 30) })) }),
    pptx: await makePptx(Array.from({ length: 100 }, (_, s) => ({ title: `Slide ${s + 1}`, body: paragraphs(6, s * 6) }))),
    xlsx: await makeXlsx([{ name: 'Abstracts', rows: [['Title', 'Sentence', 'Words'], ...corpus.slice(0, 1500).map((d) => [d.title, d.text.slice(0, 200), d.text.split(' ').length])] }]),
  };
  const parse: Record<string, unknown> = {};
  for (const [format, bytes] of Object.entries(files)) {
    const path = `bench.${format}`;
    const { blocks } = await parseDocument({ path, bytes }, parseLimits()); // warm (loads the parser)
    const text = blocks.map((b) => b.text).join('\n\n');
    const runs = 5;
    let started = performance.now();
    for (let i = 0; i < runs; i++) await parseDocument({ path, bytes }, parseLimits());
    const seconds = (performance.now() - started) / 1000 / runs;
    // Baseline: the same text read as a .txt file.
    const plain = Buffer.from(text);
    started = performance.now();
    for (let i = 0; i < runs; i++) await parseDocument({ path: 'bench.txt', bytes: plain }, parseLimits());
    const textSeconds = (performance.now() - started) / 1000 / runs;
    parse[format] = {
      fileMB: round(bytes.byteLength / 1e6, 3),
      textMB: round(plain.byteLength / 1e6, 3),
      fileMBPerSecond: round(bytes.byteLength / 1e6 / seconds),
      textMBPerSecond: round(plain.byteLength / 1e6 / seconds),
      msPerFile: round(seconds * 1000, 1),
      vsPlainText: round(seconds / textSeconds, 1),
    };
  }
  results.parse = parse;

  // --- A 200-page PDF through an upload -------------------------------------------------------
  const { call, rt, scope, local } = await benchApp('ten_documentsbench');
  const { dynamoTotals } = await import('../shared/store/request-metrics');
  const manual = await makePdf(Array.from({ length: 200 }, (_, p) => ({ heading: `Chapter ${p + 1}`, lines: paragraphs(45, p * 45).map((s) => s.slice(0, 95)) })), { title: 'Manual' });
  const source = await call('POST', '/v1/knowledge-sources', { name: 'manual', type: 'file-collection' });
  await call('POST', `/v1/knowledge-sources/${source.data.id}/connect`, {});
  await local.ingestion!.drain();
  const ticket = (await call('POST', `/v1/knowledge-sources/${source.data.id}/uploads`, { path: 'manual.pdf', size: manual.byteLength })).data as unknown as { uploadId: string; url: string; headers: Record<string, string> };
  await fetch(ticket.url, { method: 'PUT', headers: ticket.headers, body: manual });
  const before = dynamoTotals();
  const started = performance.now();
  await call('POST', `/v1/knowledge-sources/${source.data.id}/uploads/${ticket.uploadId}/complete`);
  await local.ingestion!.drain();
  const seconds = (performance.now() - started) / 1000;
  const after = dynamoTotals();
  const indexed = (await call('GET', `/v1/knowledge-sources/${source.data.id}`)).data as unknown as { status: string; stats: { chunks: number } };
  if (indexed.status !== 'ready') throw new Error(`the PDF source ended ${indexed.status}`);
  results.pdf200 = {
    fileMB: round(manual.byteLength / 1e6, 2),
    seconds: round(seconds, 1),
    pagesPerSecond: round(200 / seconds, 1),
    chunks: indexed.stats.chunks,
    dynamoRequestsPerPage: round((after.dynamoRequests - before.dynamoRequests) / 200, 1),
  };

  // --- A 3.7 MB text file through an upload ---------------------------------------------------
  const lines: string[] = [];
  for (let p = 0, size = 0; size < 3.7e6; p++) {
    const paragraph = paragraphs(6, p * 6).join(' ');
    lines.push(paragraph, '');
    size += paragraph.length + 2;
  }
  const largeText = Buffer.from(lines.join('\n'));
  const textSource = await call('POST', '/v1/knowledge-sources', { name: 'large-text', type: 'file-collection' });
  await call('POST', `/v1/knowledge-sources/${textSource.data.id}/connect`, {});
  await local.ingestion!.drain();
  const textTicket = (await call('POST', `/v1/knowledge-sources/${textSource.data.id}/uploads`, { path: 'large.txt', size: largeText.byteLength })).data as unknown as { uploadId: string; url: string; headers: Record<string, string> };
  await fetch(textTicket.url, { method: 'PUT', headers: textTicket.headers, body: largeText });
  const textStarted = performance.now();
  await call('POST', `/v1/knowledge-sources/${textSource.data.id}/uploads/${textTicket.uploadId}/complete`);
  await local.ingestion!.drain();
  const textSeconds = (performance.now() - textStarted) / 1000;
  const textIndexed = (await call('GET', `/v1/knowledge-sources/${textSource.data.id}`)).data as unknown as { status: string; stats: { chunks: number } };
  if (textIndexed.status !== 'ready') throw new Error(`the text source ended ${textIndexed.status}`);
  results.largeText = {
    fileMB: round(largeText.byteLength / 1e6, 2),
    chunks: textIndexed.stats.chunks,
    secondsToReady: round(textSeconds, 1),
    chunksPerSecond: Math.round(textIndexed.stats.chunks / textSeconds),
  };

  // --- Hybrid search cost -----------------------------------------------------------------------
  const { searchSource } = await import('../shared/search/search');
  const { withDynamoCounters } = await import('../shared/store/request-metrics');
  const { knowledgeSources } = await import('../shared/knowledge/sources');
  const documents = corpus.slice(0, 1000).map((d, i) => ({ path: `cisi/${i}.txt`, content: `${d.title}\n\n${d.text}` }));
  const hybridSource = await call('POST', '/v1/knowledge-sources', { name: 'cisi', type: 'file-collection', files: documents, embedding: { model: 'bedrock/amazon.titan-embed-text-v2:0', dimensions: 256 } });
  const embedStarted = performance.now();
  await call('POST', `/v1/knowledge-sources/${hybridSource.data.id}/connect`, {});
  await local.ingestion!.drain();
  const embedSeconds = (performance.now() - embedStarted) / 1000;
  const record = await knowledgeSources.get(rt, scope, hybridSource.data.id);
  if (record.status !== 'ready') throw new Error(`the hybrid source ended ${record.status}: ${JSON.stringify(record.error)}`);
  const measure = async (mode: 'lexical' | 'hybrid') => {
    const requests: number[] = [];
    const units: number[] = [];
    const ms: number[] = [];
    for (const query of queries) {
      const t0 = performance.now();
      const { result, counters } = withDynamoCounters(() => searchSource(rt, scope, record, { query, topK: 10, searchMode: mode }));
      await result;
      ms.push(performance.now() - t0);
      requests.push(counters.dynamoRequests);
      units.push(counters.readUnits);
    }
    return { requests: mean(requests), readUnits: mean(units), p50ms: percentile(ms, 0.5), p95ms: percentile(ms, 0.95) };
  };
  // Every query embedded once first, so the hybrid timings are of the search, not of the stand-in provider.
  await measure('hybrid');
  const lexical = await measure('lexical');
  const hybrid = await measure('hybrid');
  results.hybridSearch = {
    documents: 1000,
    chunks: record.stats?.chunks,
    ingestSecondsWithEmbedding: round(embedSeconds, 1),
    queries: queries.length,
    lexical,
    hybrid,
    extraRequestsPerQuery: round(hybrid.requests - lexical.requests, 1),
    extraReadUnitsPerQuery: round(hybrid.readUnits - lexical.readUnits, 1),
    readUnitRatio: round(hybrid.readUnits / lexical.readUnits),
    p50Ratio: round(hybrid.p50ms / lexical.p50ms),
  };

  writeResults('documents', results);
  await local.stop();
  await services.stop();
  await providers.close();
  process.exit(0);
}

runBench(main);
