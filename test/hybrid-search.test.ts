import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRetrievalProviders } from './helpers/retrieval-providers';

// The providers' endpoints and keys are configuration, read once when the runtime loads: set them
// first, then load the app (nothing above imports the configuration).
const providers = await startRetrievalProviders();
Object.assign(process.env, {
  OPENAI_API_KEY: 'sk-test-embeddings',
  OPENAI_BASE_URL: `${providers.url}/v1`,
  BEDROCK_REGION: 'us-east-1',
  BEDROCK_ENDPOINT: providers.url,
  AWS_ACCESS_KEY_ID: 'AKIDTEST',
  AWS_SECRET_ACCESS_KEY: 'test-secret',
  COHERE_API_KEY: 'co-test-key',
  COHERE_BASE_URL: providers.url,
});
const { createLocalApp } = await import('../local/local-app');
const { call } = await import('./helpers/http');
const { newTenant } = await import('./helpers/tenant');
const { testLocal, testRt } = await import('./helpers/runtime');
// A compaction's old items go a second after its swap, not a minute: the test need not wait.
(await import('../shared/search/index-tuning')).indexTuning.compactionGraceSeconds = 1;

const app = createLocalApp(testRt);
const settle = () => testLocal.ingestion!.drain();
afterAll(() => providers.close());

// A garage's pages: every one says "garage"; only the rates page answers a question about what
// fixing a car costs, in other words than the question's (sedan, servicing, fee).
const files = [
  { path: 'rates.md', content: '# Rates\n\nServicing a sedan at the garage has a fee of 90 euros, parts included.' },
  { path: 'history.md', content: '# Garage history\n\nThe garage opened in 1990 on a quiet street; the garage moved in 2004.' },
  { path: 'team.md', content: '# Garage team\n\nFour mechanics and one apprentice work at the garage, the oldest garage in town.' },
  { path: 'parking.md', content: '# Garage parking\n\nCustomers park in the yard behind the garage, next to the garage door.' },
  { path: 'weekend.md', content: '# Garage weekends\n\nThe garage is closed on Sundays; the garage phone is answered on Saturdays.' },
];
const question = 'how much does car repair cost at the garage';

describe('hybrid search', () => {
  let t: Awaited<ReturnType<typeof newTenant>>;
  let titan: string;
  // Without pseudo-relevance feedback, BM25F alone ranks by the one shared word, "garage".
  const search = async (id: string, body: Record<string, unknown>) => (await call(app, 'POST', `/v1/knowledge-sources/${id}/search`, { key: t.apiKey, body: { query: question, feedback: false, ...body } })).body.data;
  const create = async (extra: Record<string, unknown>) => {
    const id = (await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'Garage', type: 'file-collection', files, ...extra } })).body.data.id as string;
    await call(app, 'POST', `/v1/knowledge-sources/${id}/connect`, { key: t.apiKey, body: {} });
    await settle();
    return id;
  };

  beforeAll(async () => {
    t = await newTenant();
    providers.throttleNext(3); // the provider throttles the first calls: ingestion waits and retries
    titan = await create({ embedding: { model: 'bedrock/amazon.titan-embed-text-v2:0', dimensions: 256 } });
  });

  it('embeds every chunk at ingestion through Bedrock InvokeModel, retrying when throttled', async () => {
    expect((await call(app, 'GET', `/v1/knowledge-sources/${titan}`, { key: t.apiKey })).body.data.status).toBe('ready');
    const calls = providers.seen.filter((s) => s.path.startsWith('/model/amazon.titan-embed-text-v2:0/invoke'));
    expect(calls.length).toBeGreaterThanOrEqual(files.length + 3);
    expect(calls[0]!.body).toMatchObject({ inputText: expect.stringContaining('\n\n'), normalize: true, dimensions: 256 });
    // The provider's tokens are the source's usage, under the embedding model.
    const byModel = (await call(app, 'GET', '/v1/usage?groupBy=model', { key: t.apiKey })).body.data.rows;
    expect(byModel.find((r: { group: string }) => r.group === 'bedrock/amazon.titan-embed-text-v2:0')?.inputTokens).toBeGreaterThan(0);
  });

  it('fuses vector similarity with the lexical ranks: the answer in other words comes first', async () => {
    const lexical = await search(titan, { searchMode: 'lexical' });
    expect(lexical.mode).toBe('lexical');
    expect(lexical.results[0].path).not.toBe('rates.md');
    const hybrid = await search(titan, { vectorWeight: 0.9 });
    expect(hybrid.mode).toBe('hybrid');
    expect(hybrid.results[0].path).toBe('rates.md');
    expect(hybrid.results[0].scores).toMatchObject({ lexical: expect.any(Number), vector: expect.any(Number), fused: hybrid.results[0].score });
    // The query was embedded once (a second identical search asks the provider nothing).
    const before = providers.seen.length;
    await search(titan, { vectorWeight: 0.9 });
    expect(providers.seen.length).toBe(before);
    // Weight 0: the lexical order, whatever the vectors say.
    expect((await search(titan, { vectorWeight: 0 })).results.map((r: { path: string }) => r.path)).toEqual(lexical.results.map((r: { path: string }) => r.path));
  });

  it('reorders the best fused results with a Bedrock reranker (Cohere Rerank 3.5)', async () => {
    const id = await create({ embedding: { model: 'bedrock/amazon.titan-embed-text-v2:0' }, rerank: { model: 'bedrock/cohere.rerank-v3-5:0', candidates: 5 } });
    const found = await search(id, { vectorWeight: 0 });
    expect(found.results[0]).toMatchObject({ path: 'rates.md', scores: { rerank: found.results[0].score } });
    const call = providers.seen.filter((s) => s.path.startsWith('/model/cohere.rerank-v3-5:0/invoke')).at(-1)!;
    expect(call.body).toMatchObject({ query: question, api_version: 2, top_n: 5 });
    expect(call.body.documents).toHaveLength(5);
  });

  it('embeds with OpenAI and reranks with Cohere’s API, keys sent as bearer tokens', async () => {
    const id = await create({ embedding: { model: 'openai/text-embedding-3-small', dimensions: 64 }, rerank: { model: 'cohere/rerank-v3.5' } });
    const embedded = providers.seen.filter((s) => s.path === '/v1/embeddings');
    expect(embedded[0]).toMatchObject({ authorization: 'Bearer sk-test-embeddings', body: { model: 'text-embedding-3-small', dimensions: 64, encoding_format: 'float' } });
    // One request carries a batch of chunks.
    expect((embedded[0]!.body.input as string[]).length).toBe(files.length);
    expect((await search(id, {})).results[0].path).toBe('rates.md');
    expect(providers.seen.filter((s) => s.path === '/v2/rerank').at(-1)).toMatchObject({ authorization: 'Bearer co-test-key', body: { model: 'rerank-v3.5', query: question } });
    // Any OpenAI-compatible server (OPENAI_BASE_URL) serves openai-compatible/<model>, named as the server knows it.
    const compatible = await create({ embedding: { model: 'openai-compatible/nomic-embed-text' } });
    expect(providers.seen.filter((s) => s.path === '/v1/embeddings').at(-1)!.body).toMatchObject({ model: 'nomic-embed-text' });
    expect((await search(compatible, { vectorWeight: 0.9 })).results[0].path).toBe('rates.md');
  });

  it('re-embeds the kept chunks when the model changes', async () => {
    const got = (await call(app, 'GET', `/v1/knowledge-sources/${titan}`, { key: t.apiKey })).body.data;
    const seenBefore = providers.seen.length;
    const put = await call(app, 'PUT', `/v1/knowledge-sources/${titan}`, { key: t.apiKey, body: { ...got, files, embedding: { model: 'bedrock/amazon.titan-embed-text-v2:0', dimensions: 512 } } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    await settle();
    const again = providers.seen.slice(seenBefore).filter((s) => s.path.includes('titan-embed'));
    expect(again.length).toBe(files.length);
    expect(again.every((s) => s.body.dimensions === 512)).toBe(true);
    const found = await search(titan, { vectorWeight: 0.9 });
    expect(found.results[0]).toMatchObject({ path: 'rates.md', scores: { vector: expect.any(Number) } });
  });

  it('keeps the vectors through a compaction (they are stored with their chunks)', async () => {
    await call(app, 'POST', '/v1/knowledge-sources/' + titan + '/files', { key: t.apiKey, body: { files: [{ path: 'extra.md', content: '# Garage extra\n\nThe garage sells winter tyres.' }] } });
    await settle();
    const compacted = await call(app, 'POST', `/v1/knowledge-sources/${titan}/compact`, { key: t.apiKey });
    expect(compacted.status).toBe(202);
    await settle();
    const found = await search(titan, { vectorWeight: 0.9 });
    expect(found.results[0]).toMatchObject({ path: 'rates.md', scores: { vector: expect.any(Number) } });
    expect(found.results.every((r: { scores: { vector?: number } }) => r.scores.vector !== undefined)).toBe(true);
  });

  it('lets an agent search hybrid by default, or lexical when it says so', async () => {
    const agent = async (searchMode?: string) =>
      (await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Garage', model: 'gpt-4', capabilities: ['chat', 'document-search'], knowledgeSourceIds: [titan], ...(searchMode ? { searchMode } : {}) } })).body.data;
    const hybrid = await agent();
    expect(hybrid.searchMode).toBeUndefined();
    const lexical = await agent('lexical');
    expect(lexical.searchMode).toBe('lexical');
    const ask = async (id: string, message: string) => (await call(app, 'POST', `/v1/agents/${id}/converse`, { key: t.apiKey, body: { message } })).body.data;
    const embeddedQueries = () => providers.seen.filter((s) => s.path.includes('titan-embed') && String(s.body.inputText).includes('automobile')).length;
    // The built-in engine cannot tie "fixing an automobile" to "servicing a sedan", so it cites nothing; its reply names the passage search ranked first.
    expect((await ask(hybrid.id, 'what does fixing my automobile cost at the garage')).reply).toContain('the first from “Rates”');
    expect(embeddedQueries()).toBe(1);
    await ask(lexical.id, 'what does mending an automobile cost at the garage');
    expect(embeddedQueries()).toBe(1); // the lexical agent embedded nothing
  });

  it('names the field of a bad embedding or rerank setting, and refuses a provider without credentials', async () => {
    const bad = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'x', type: 'file-collection', embedding: { model: 'anthropic/claude' } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('embedding.model');
    const rerank = await call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'x', type: 'file-collection', rerank: { model: 'openai/gpt-4o' } } });
    expect(rerank.body.error.details.field).toBe('rerank.model');
  });
});
