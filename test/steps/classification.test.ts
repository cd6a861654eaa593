import { describe, expect, it } from 'vitest';
import { classification } from '../../shared/workflows/steps/classification';
import type { StepContext } from '../../shared/workflows/steps/step-kind';
import { testRt } from '../helpers/runtime';
import { scriptedModel } from '../helpers/scripted-model';
import { newTenant } from '../helpers/tenant';

const vars = (input: string): StepContext['vars'] => ({ input, parameters: { topic: 'parcel' }, outputs: {} });
const context = async (rt = testRt, input = 'I was charged twice on my bill'): Promise<StepContext> => ({
  rt,
  scope: (await newTenant()).scope,
  vars: vars(input),
  deadline: AbortSignal.timeout(5000),
});
const categories = ['billing', { name: 'shipping', description: 'deliveries and parcels' }];

describe('classification step', () => {
  it('classifies lexically with the built-in engine, from the input template', async () => {
    const out = await classification.execute(classification.config.parse({ model: 'local/x', categories }), await context());
    expect(out.output).toMatchObject({ category: 'billing' });
    const templated = await classification.execute(
      classification.config.parse({ model: 'local/x', categories, input: 'Where is my {{parameters.topic}}?' }),
      await context(testRt, 'ignored'),
    );
    expect(templated.output).toMatchObject({ category: 'shipping' });
  });

  it('takes a real model’s category, and falls back to the lexical classifier when it answers off the list', async () => {
    const { models, requests } = scriptedModel('Shipping.', 'a banana');
    const rt = { ...testRt, models };
    const chosen = await classification.execute(classification.config.parse({ model: 'gpt-4', categories }), await context(rt));
    expect(chosen).toEqual({ output: { category: 'shipping', confidence: 1, scores: { billing: 0, shipping: 1 } }, usage: { inputTokens: 10, outputTokens: 2 }, model: 'scripted/gpt-4', models: { 'scripted/gpt-4': { inputTokens: 10, outputTokens: 2, cachedInputTokens: 0, cacheWriteTokens: 0, requests: 1, failedRequests: 0 } } });
    expect(requests[0]).toMatchObject({ temperature: 0, maxTokens: 20, messages: [{ role: 'user', content: 'I was charged twice on my bill' }] });
    expect(requests[0]!.instructions).toContain('shipping (deliveries and parcels)');
    const fallback = await classification.execute(classification.config.parse({ model: 'gpt-4', categories }), await context(rt));
    expect(fallback.output).toMatchObject({ category: 'billing' });
  });

  it('reads bare category names by the words people use for them (a return asked without the word "return")', async () => {
    const bare = ['billing', 'shipping', 'returns'];
    const asked = async (input: string) => ((await classification.execute(classification.config.parse({ model: 'local/x', categories: bare, input }), await context(testRt))).output as { category: string; confidence: number });
    expect(await asked('Can I send these shoes back for a refund?')).toMatchObject({ category: 'returns', confidence: 1 });
    expect(await asked('Where is my parcel?')).toMatchObject({ category: 'shipping' });
    expect(await asked('I was charged twice this month')).toMatchObject({ category: 'billing' });
    // Nothing said of any: an even split, not a confident guess.
    expect((await asked('Hello there')).confidence).toBeCloseTo(1 / 3, 5);
  });

  it('refuses fewer than two categories and repeated ones', () => {
    expect(classification.config.safeParse({ model: 'local/x', categories: ['only'] }).success).toBe(false);
    expect(classification.config.safeParse({ model: 'local/x', categories: ['a', 'A'] }).success).toBe(false);
  });

  it('names what its output holds', () => {
    expect(classification.isOutputPath(['category'])).toBe(true);
    expect(classification.isOutputPath(['scores', 'billing'])).toBe(true);
    expect(classification.isOutputPath(['text'])).toBe(false);
  });
});
