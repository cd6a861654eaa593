import { assertSearchable, searchSource } from '../search/search';
import { isReady, knowledgeSources } from '../knowledge';
import type { KnowledgeSearchDefinition, ToolKind } from '../tools';

/** `knowledge_search`: the agent's sources as a tool, so the model decides when and what to search. */
export const knowledgeSearchTool: ToolKind<KnowledgeSearchDefinition, KnowledgeSearchDefinition> = {
  type: 'knowledge_search',
  expose: (tool) => [
    {
      name: tool.name,
      description: tool.description,
      parameters: { type: 'object', properties: { query: { type: 'string', description: 'What to search for' }, topK: { type: 'integer', minimum: 1, maximum: 20 } }, required: ['query'] },
      requireApproval: tool.requireApproval,
      ...(tool.policy ? { policy: tool.policy } : {}),
      async call(args, { rt, scope, agent, user }) {
        const query = String(args.query);
        const topK = typeof args.topK === 'number' ? args.topK : 5;
        const found: Array<{ title: string; text: string; score: number; where: string }> = [];
        for (const id of agent?.knowledgeSourceIds ?? []) {
          const source = await knowledgeSources.findRecent(rt, scope, id, isReady);
          if (!source) continue;
          try {
            assertSearchable(source);
          } catch {
            continue; // not ready: the other sources still answer
          }
          // Only what the turn's end user may read (nobody: what everyone may read).
          const { results } = await searchSource(rt, scope, source, { query, topK, ...(user ? { reader: user } : {}) });
          found.push(...results.map((r) => ({ title: r.title, text: r.text, score: r.score, where: r.path ?? r.rowKey ?? r.documentId })));
        }
        found.sort((a, b) => b.score - a.score);
        if (found.length === 0) return 'No passage matched.';
        return found.slice(0, topK).map((r, i) => `[${i + 1}] ${r.title} (${r.where}): ${r.text}`).join('\n\n');
      },
    },
  ],
};
