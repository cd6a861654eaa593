import type { Runtime } from '../runtime';
import type { TenantScope } from '../tenancy';
import type { ChatMessage, Passage } from '../models/types';
import { searchSource } from '../search/search';
import type { Reader } from '../search/document-access';
import { z } from '@hono/zod-openapi';
import { isReady, knowledgeSources, sourceLocation } from '../knowledge';
import type { Agent } from './agent-schema';

/** Passages a grounded turn is given (the best of all the agent's sources). */
const PASSAGES = 5;

/** A passage a reply may cite: as the API shows it, and as a paused turn keeps it (parsed when read). */
export const converseSource = z.object({
  knowledgeSourceId: z.string(),
  documentId: z.string(),
  path: z.string().optional(),
  rowKey: z.string().optional(),
  title: z.string().optional().openapi({ description: 'The document’s title (a database row’s from its title column), as search results give it' }),
  chunkId: z.string(),
  score: z.number(),
  snippet: z.string(),
  location: sourceLocation.optional().openapi({ description: 'The page, slide or sheet the passage comes from' }),
});
export type ConverseSource = z.infer<typeof converseSource>;

export interface Grounding {
  passages: Passage[];
  sources: ConverseSource[];
  /** The agent's sources that were not searched: not ready, or gone. */
  skipped: Array<{ knowledgeSourceId: string; status: string }>;
}

/** Passages from the agent's ready sources for the message and the previous user turn. */
export async function ground(rt: Runtime, scope: TenantScope, agent: Agent, message: string, history: ChatMessage[], reader: Reader | undefined): Promise<Grounding> {
  const previous = [...history].reverse().find((m) => m.role === 'user')?.content ?? '';
  const query = `${message} ${previous}`.slice(0, 4000);
  const skipped: Grounding['skipped'] = [];
  const found = await Promise.all(
    agent.knowledgeSourceIds.map(async (id) => {
      const source = await knowledgeSources.findRecent(rt, scope, id, isReady);
      if (!source || source.status !== 'ready') {
        skipped.push({ knowledgeSourceId: id, status: source?.status ?? 'deleted' });
        return [];
      }
      // Only what the end user may read is ranked: a hidden document never reaches the model, the reply or its citations.
      const { results, mode } = await searchSource(rt, scope, source, { query, topK: PASSAGES, searchMode: agent.searchMode ?? 'hybrid', ...(reader ? { reader } : {}) });
      return results.map((r, rank) => ({ ...r, knowledgeSourceId: id, rank, mode }));
    }),
  );
  // Scores of a hybrid search (fused ranks) and a lexical one (BM25F) cannot be compared: sources
  // searched different ways are merged by their ranks (reciprocal rank fusion) instead.
  const all = found.flat();
  const mixed = new Set(all.map((r) => r.mode)).size > 1;
  const best = all.sort((a, b) => (mixed ? 1 / (61 + b.rank) - 1 / (61 + a.rank) : b.score - a.score)).slice(0, PASSAGES);
  return {
    passages: best.map((r) => ({ title: r.title, text: r.text })),
    sources: best.map((r) => ({
      knowledgeSourceId: r.knowledgeSourceId,
      documentId: r.documentId,
      ...(r.path !== undefined ? { path: r.path } : { rowKey: r.rowKey }),
      ...(r.title ? { title: r.title } : {}),
      chunkId: r.chunkId,
      score: r.score,
      snippet: r.text.length > 300 ? `${r.text.slice(0, 297)}…` : r.text,
      ...(r.location ? { location: r.location } : {}),
    })),
    skipped,
  };
}
