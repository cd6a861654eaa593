import { z } from '@hono/zod-openapi';
import { NotFoundError } from '../../errors';
import { isId } from '../../ids';
import { assertSearchable, searchSource } from '../../search/search';
import { knowledgeSources } from '../../knowledge';
import { integerBetween } from '../../schema-helpers';
import { renderTemplate } from '../../templates';
import type { WorkKind } from './step-kind';

const config = z.strictObject({
  knowledgeSourceId: z.string().refine((id) => isId('knowledgeSource', id), { error: 'must be a knowledge source id (ks_…)' }),
  query: z.string().trim().min(1).max(10_000).openapi({ example: '{{user_message}}' }),
  topK: integerBetween(1, 100).default(5),
});

const RESULT_FIELDS = ['text', 'path', 'rowKey', 'score', 'title', 'chunkId', 'documentId'];

/** Searches one of the tenant's ready knowledge sources; `context` numbers the passages for prompts. */
export const search: WorkKind<typeof config> = {
  type: 'search',
  config,
  templateFields: ['query'],
  references: (cfg) => [{ kind: 'KS', id: cfg.knowledgeSourceId, field: 'knowledgeSourceId' }],
  publishes: {
    variables: ['context'],
    into(output, scope) {
      const out = output as { context: unknown; results: Array<{ title: string; text: string }> };
      scope.vars.context = String(out.context);
      // A generation after a search is grounded in its passages.
      scope.passages = out.results.map((r) => ({ title: r.title, text: r.text }));
    },
  },
  isOutputPath: (p) =>
    (p.length === 1 && ['results', 'context'].includes(p[0]!)) ||
    (p[0] === 'results' && /^\d+$/.test(p[1] ?? '') && (p.length === 2 || (p.length === 3 && RESULT_FIELDS.includes(p[2]!)) || (p.length >= 4 && p[2] === 'metadata'))),
  async execute(cfg, { rt, scope, vars }) {
    const source = await knowledgeSources.find(rt, scope, cfg.knowledgeSourceId);
    if (!source) throw new NotFoundError('knowledge source', cfg.knowledgeSourceId);
    assertSearchable(source);
    // Only what the execution's end user may read (nobody: what everyone may read).
    const reader = vars.user?.id ? { id: vars.user.id, groups: vars.user.groups } : undefined;
    const { results } = await searchSource(rt, scope, source, { query: renderTemplate(cfg.query, vars), topK: cfg.topK, ...(reader ? { reader } : {}) });
    return { output: { results, context: results.map((r, i) => `[${i + 1}] ${r.text}`).join('\n\n') } };
  },
};
