import { beforeAll, describe, expect, it } from 'vitest';
import { connectSource } from '../../shared/knowledge/connect';
import { knowledgeSourceInput } from '../../shared/knowledge/source-schema';
import { createKnowledgeSource } from '../../shared/knowledge/sources';
import { search } from '../../shared/workflows/steps/search';
import type { StepContext } from '../../shared/workflows/steps/step-kind';
import { testLocal, testRt } from '../helpers/runtime';
import { newTenant, type TestTenant } from '../helpers/tenant';

describe('search step', () => {
  let t: TestTenant;
  let ready: string;
  let pending: string;
  const context = (input: string): StepContext => ({ rt: testRt, scope: t.scope, vars: { input, parameters: {}, outputs: {} }, deadline: AbortSignal.timeout(5000) });

  beforeAll(async () => {
    t = await newTenant();
    const files = [
      { path: 'returns.md', content: '# Returns\n\nItems can be returned within 30 days of delivery.' },
      { path: 'shipping.md', content: '# Shipping\n\nParcels arrive in 3 to 5 days.' },
    ];
    ready = (await createKnowledgeSource(testRt, t.scope, knowledgeSourceInput.parse({ name: 'help', type: 'file-collection', files }))).record.id;
    await connectSource(testRt, t.scope, ready, { options: { sync: true, index: true } });
    await testLocal.ingestion!.drain();
    pending = (await createKnowledgeSource(testRt, t.scope, knowledgeSourceInput.parse({ name: 'later', type: 'file-collection', files }))).record.id;
  });

  it('searches a ready source with the rendered query and numbers the passages as context', async () => {
    const out = await search.execute(search.config.parse({ knowledgeSourceId: ready, query: 'How long do I have to return {{input}}?', topK: 1 }), context('an item'));
    const { results, context: text } = out.output as { results: Array<{ path: string; text: string }>; context: string };
    expect(results).toHaveLength(1);
    expect(results[0]!.path).toBe('returns.md');
    expect(text).toBe(`[1] ${results[0]!.text}`);
  });

  it('fails with CONFLICT on a source that is not ready and NOT_FOUND on one that is gone', async () => {
    await expect(search.execute(search.config.parse({ knowledgeSourceId: pending, query: 'returns' }), context(''))).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(
      search.execute(search.config.parse({ knowledgeSourceId: 'ks_00000000000000000000000000', query: 'returns' }), context('')),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('defaults topK to 5 and refuses ids that are not knowledge source ids', () => {
    expect(search.config.parse({ knowledgeSourceId: ready, query: 'q' }).topK).toBe(5);
    expect(search.config.safeParse({ knowledgeSourceId: 'agt_x', query: 'q' }).success).toBe(false);
  });
});
