import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/**
 * Embedding and rerank providers as they answer on the wire (request and response bodies shaped
 * as the real APIs': Bedrock InvokeModel for Titan Text Embeddings V2 and Cohere Rerank 3.5,
 * OpenAI's /embeddings, Cohere's /v2/rerank). Paid APIs cannot run here: this is the only fake.
 *
 * The vectors are made to mean something: words of one concept (car, automobile, vehicle…) share
 * a dimension, so two texts about the same thing in different words are close, as with a real
 * embedding model; every other word gets a hashed dimension of its own.
 */
const CONCEPTS: string[][] = [
  ['car', 'cars', 'automobile', 'automobiles', 'vehicle', 'vehicles', 'sedan'],
  ['price', 'prices', 'cost', 'costs', 'fee', 'fees', 'expensive', 'cheap'],
  ['repair', 'repairs', 'fix', 'fixing', 'mend', 'service', 'servicing', 'maintenance'],
  ['refund', 'refunds', 'reimbursement', 'money', 'back'],
];

export const DIMENSIONS = 64;

export function conceptVector(text: string, dimensions = DIMENSIONS): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const concept = CONCEPTS.findIndex((c) => c.includes(word));
    if (concept >= 0) vector[concept]! += 3;
    else {
      let h = 0;
      for (const ch of word) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
      vector[CONCEPTS.length + (h % (dimensions - CONCEPTS.length))]! += 1;
    }
  }
  return vector;
}

const relevance = (query: string, document: string) => {
  const q = conceptVector(query);
  const d = conceptVector(document);
  const dot = q.reduce((s, x, i) => s + x * d[i]!, 0);
  const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0)) || 1;
  return dot / norm(q) / norm(d);
};

export interface Seen {
  path: string;
  body: Record<string, unknown>;
  authorization?: string;
}

export interface RetrievalProviders {
  url: string;
  seen: Seen[];
  /** Answer the next n embedding calls with a throttling error (429). */
  throttleNext(n: number): void;
  close(): Promise<void>;
}

export async function startRetrievalProviders(): Promise<RetrievalProviders> {
  const seen: Seen[] = [];
  let throttled = 0;
  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      const path = decodeURIComponent(req.url ?? '');
      const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      seen.push({ path, body, authorization: req.headers.authorization });
      const embedding = path.includes('titan-embed') || path.endsWith('/embeddings');
      if (embedding && throttled > 0) {
        throttled--;
        if (path.endsWith('/embeddings')) return json(res, 429, { error: { message: 'Rate limit reached for text-embedding-3-small', type: 'requests', param: null, code: 'rate_limit_exceeded' } });
        return json(res, 429, { message: 'Too many requests, please wait before trying again.' }, { 'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/' });
      }
      // Bedrock InvokeModel: Titan Text Embeddings V2.
      if (path.startsWith('/model/amazon.titan-embed-text-v2:0/invoke')) {
        const text = String(body.inputText);
        return json(res, 200, { embedding: conceptVector(text, Number(body.dimensions ?? DIMENSIONS)), embeddingsByType: {}, inputTextTokenCount: text.split(/\s+/).length });
      }
      // Bedrock InvokeModel: Cohere Rerank 3.5 (and Amazon Rerank, the same body without api_version).
      if (/^\/model\/(cohere\.rerank-v3-5:0|amazon\.rerank-v1:0)\/invoke/.test(path)) {
        const documents = body.documents as string[];
        const results = documents.map((d, index) => ({ index, relevance_score: relevance(String(body.query), d) })).sort((a, b) => b.relevance_score - a.relevance_score);
        return json(res, 200, { id: 'c1a2b3', results: results.slice(0, Number(body.top_n ?? results.length)) });
      }
      // OpenAI /embeddings.
      if (path === '/v1/embeddings') {
        const input = body.input as string[];
        return json(res, 200, {
          object: 'list',
          data: input.map((text, index) => ({ object: 'embedding', index, embedding: conceptVector(text, Number(body.dimensions ?? DIMENSIONS)) })),
          model: 'text-embedding-3-small',
          usage: { prompt_tokens: input.join(' ').split(/\s+/).length, total_tokens: input.join(' ').split(/\s+/).length },
        });
      }
      // Cohere /v2/rerank.
      if (path === '/v2/rerank') {
        const documents = body.documents as string[];
        const results = documents.map((d, index) => ({ index, relevance_score: relevance(String(body.query), d) })).sort((a, b) => b.relevance_score - a.relevance_score);
        return json(res, 200, { id: 'r-1', results, meta: { api_version: { version: '2' }, billed_units: { search_units: 1 } } });
      }
      json(res, 404, { message: `no such route ${path}` });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url,
    seen,
    throttleNext: (n) => (throttled = n),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
