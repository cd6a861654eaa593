import { describe, expect, it } from 'vitest';
import { generation } from '../../shared/workflows/steps/generation';
import { testRt } from '../helpers/runtime';
import { scriptedModel } from '../helpers/scripted-model';
import { newTenant } from '../helpers/tenant';

describe('generation step', () => {
  it('renders prompt and instructions, passes the latest search’s passages and the defaults', async () => {
    const { models, requests } = scriptedModel('Refunds take 5 days [1].');
    const out = await generation.execute(generation.config.parse({ model: 'gpt-4', prompt: 'Answer: {{input}} ({{category}})', instructions: 'Tone: {{parameters.tone}}' }), {
      rt: { ...testRt, models },
      scope: (await newTenant()).scope,
      vars: { input: 'How long do refunds take?', parameters: { tone: 'friendly' }, outputs: {}, category: 'billing' },
      passages: [{ title: 'Billing', text: 'Refunds take 5 business days.' }],
      deadline: AbortSignal.timeout(5000),
    });
    expect(requests[0]).toMatchObject({
      messages: [{ role: 'user', content: 'Answer: How long do refunds take? (billing)' }],
      instructions: 'Tone: friendly',
      passages: [{ title: 'Billing', text: 'Refunds take 5 business days.' }],
      temperature: 0.7,
      maxTokens: 1024,
    });
    expect(out).toEqual({
      output: { text: 'Refunds take 5 days [1].', usage: { inputTokens: 10, outputTokens: 2 }, model: 'scripted/gpt-4' },
      usage: { inputTokens: 10, outputTokens: 2 },
      model: 'scripted/gpt-4',
      // What each model of the step's chain did, for usage accounting.
      models: { 'scripted/gpt-4': { inputTokens: 10, outputTokens: 2, cachedInputTokens: 0, cacheWriteTokens: 0, requests: 1, failedRequests: 0 } },
    });
  });

  it('keeps at most 20,000 characters of a reply in the execution record', async () => {
    const { models } = scriptedModel('x'.repeat(25_000));
    const out = await generation.execute(generation.config.parse({ model: 'gpt-4', prompt: 'Write a lot', temperature: 0, maxTokens: 9000 }), {
      rt: { ...testRt, models },
      scope: (await newTenant()).scope,
      vars: { input: '', parameters: {}, outputs: {} },
      deadline: AbortSignal.timeout(5000),
    });
    expect((out.output as { text: string }).text).toHaveLength(20_000);
  });

  it('answers from the passages with the built-in engine', async () => {
    const out = await generation.execute(generation.config.parse({ model: 'local/x', prompt: 'How long do refunds take?' }), {
      rt: testRt,
      scope: (await newTenant()).scope,
      vars: { input: '', parameters: {}, outputs: {} },
      passages: [{ title: 'Billing', text: 'Refunds take 5 business days.' }],
      deadline: AbortSignal.timeout(5000),
    });
    expect((out.output as { text: string }).text).toContain('5 business days');
  });
});
