import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { bedrockSdk } from './bedrock-sdk';
import { AppError } from '../errors';
import { providerError, providerFetch } from './provider-error';

/**
 * Embedding and rerank models, for hybrid search: `bedrock/amazon.titan-embed-text-v2:0`,
 * `openai/text-embedding-3-small`, `openai-compatible/<model>` (the OpenAI wire at OPENAI_BASE_URL);
 * rerankers `bedrock/cohere.rerank-v3-5:0`, `bedrock/amazon.rerank-v1:0`, `cohere/<model>`.
 * Each speaks its provider's own request and response bodies.
 */

export interface EmbeddingModel {
  readonly name: string;
  /** Texts per request the provider takes (Titan: one). */
  readonly batchSize: number;
  embed(texts: string[], signal: AbortSignal): Promise<{ vectors: number[][]; tokens: number }>;
}

export interface Reranker {
  readonly name: string;
  /** Relevance of each document to the query, best first (indexes into `documents`). */
  rerank(query: string, documents: string[], signal: AbortSignal): Promise<Array<{ index: number; score: number }>>;
}

export const EMBEDDING_PROVIDERS = ['bedrock', 'openai', 'openai-compatible'] as const;
export const RERANK_PROVIDERS = ['bedrock', 'cohere'] as const;

export interface ProviderSettings {
  openai?: { baseUrl: string; apiKey: string };
  cohere?: { baseUrl: string; apiKey: string };
  bedrock?: () => Promise<BedrockRuntimeClient>;
}

const splitName = (name: string) => {
  const slash = name.indexOf('/');
  return { provider: name.slice(0, slash), model: name.slice(slash + 1) };
};

const missing = (provider: string, name: string) =>
  new AppError('INVALID_REQUEST', `${name} needs the ${provider} provider, which has no credentials in this deployment`, { field: 'model', provider }, { retryable: false });

export function embeddingModel(name: string, dimensions: number | undefined, settings: ProviderSettings): EmbeddingModel {
  const { provider, model } = splitName(name);
  if (provider === 'openai' || provider === 'openai-compatible') {
    const openai = settings.openai;
    if (!openai) throw missing('openai', name);
    return {
      name,
      batchSize: 128,
      async embed(texts, signal) {
        const response = await providerFetch(
          'openai',
          `${openai.baseUrl.replace(/\/$/, '')}/embeddings`,
          {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${openai.apiKey}` },
            body: JSON.stringify({ model, input: texts, encoding_format: 'float', ...(dimensions ? { dimensions } : {}) }),
          },
          signal,
        );
        const json = (await response.json()) as { data: Array<{ index: number; embedding: number[] }>; usage?: { prompt_tokens?: number } };
        const vectors = [...json.data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
        if (vectors.length !== texts.length) throw providerError('openai', 502, `asked for ${texts.length} embeddings, got ${vectors.length}`);
        return { vectors, tokens: json.usage?.prompt_tokens ?? 0 };
      },
    };
  }
  if (provider === 'bedrock') {
    if (!settings.bedrock) throw missing('bedrock', name);
    const client = settings.bedrock;
    return {
      name,
      batchSize: 1,
      async embed(texts, signal) {
        // Titan Text Embeddings V2 takes one text per call: the caller runs calls side by side.
        const out = await Promise.all(
          texts.map(async (inputText) => {
            const body = await invoke(client, model, { inputText, normalize: true, ...(dimensions ? { dimensions } : {}) }, signal);
            return body as { embedding: number[]; inputTextTokenCount?: number };
          }),
        );
        return { vectors: out.map((o) => o.embedding), tokens: out.reduce((n, o) => n + (o.inputTextTokenCount ?? 0), 0) };
      },
    };
  }
  throw new AppError('INVALID_REQUEST', `${name}: embedding providers are ${EMBEDDING_PROVIDERS.join(', ')}`, { field: 'model' }, { retryable: false });
}

export function reranker(name: string, settings: ProviderSettings): Reranker {
  const { provider, model } = splitName(name);
  const ranked = (results: Array<{ index: number; relevance_score: number }>) =>
    results.map((r) => ({ index: r.index, score: r.relevance_score })).sort((a, b) => b.score - a.score);
  if (provider === 'bedrock') {
    if (!settings.bedrock) throw missing('bedrock', name);
    const client = settings.bedrock;
    return {
      name,
      async rerank(query, documents, signal) {
        // Cohere's models on Bedrock want api_version; Amazon's take the same body without it.
        const body = { query, documents, top_n: documents.length, ...(model.startsWith('cohere.') ? { api_version: 2 } : {}) };
        return ranked(((await invoke(client, model, body, signal)) as { results: Array<{ index: number; relevance_score: number }> }).results);
      },
    };
  }
  if (provider === 'cohere') {
    const cohere = settings.cohere;
    if (!cohere) throw missing('cohere', name);
    return {
      name,
      async rerank(query, documents, signal) {
        const response = await providerFetch(
          'cohere',
          `${cohere.baseUrl.replace(/\/$/, '')}/v2/rerank`,
          { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${cohere.apiKey}` }, body: JSON.stringify({ model, query, documents, top_n: documents.length }) },
          signal,
        );
        return ranked(((await response.json()) as { results: Array<{ index: number; relevance_score: number }> }).results);
      },
    };
  }
  throw new AppError('INVALID_REQUEST', `${name}: rerank providers are ${RERANK_PROVIDERS.join(', ')}`, { field: 'model' }, { retryable: false });
}

async function invoke(client: () => Promise<BedrockRuntimeClient>, modelId: string, body: unknown, signal: AbortSignal): Promise<unknown> {
  try {
    const { InvokeModelCommand } = await bedrockSdk();
    const out = await (await client()).send(new InvokeModelCommand({ modelId, contentType: 'application/json', accept: 'application/json', body: JSON.stringify(body) }), { abortSignal: signal });
    return JSON.parse(new TextDecoder().decode(out.body));
  } catch (error) {
    if (error instanceof AppError) throw error;
    if (signal.aborted) throw providerError('bedrock', 'timeout');
    const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    throw providerError('bedrock', status ?? 'network', (error as Error).message);
  }
}
