import { describe, expect, it } from 'vitest';
import { isRefusal, normalizeAnswer, scoreCase, tokenF1, type Observed } from '../shared/evals/scorers';

/** Each scorer against values worked out by hand. */
const observed = (over: Partial<Observed> = {}): Observed => ({ text: '', sources: [], toolCalls: [], latencyMs: 100, costUsd: 0, ...over });

describe('scorers that need no model', () => {
  it('normalises as SQuAD does and computes its token F1', () => {
    expect(normalizeAnswer('The  Eiffel Tower, in Paris!')).toBe('eiffel tower in paris');
    // reply tokens: eiffel tower in paris (4); answer: eiffel tower (2); common 2 → P 0.5, R 1, F1 2/3.
    expect(tokenF1('The Eiffel Tower, in Paris!', 'the Eiffel tower')).toBeCloseTo(2 / 3, 10);
    // A repeated token counts as often as the answer has it: reply "paris paris" vs "paris" → P 0.5, R 1.
    expect(tokenF1('Paris paris', 'Paris')).toBeCloseTo(2 / 3, 10);
    expect(tokenF1('London', 'Paris')).toBe(0);
    expect(tokenF1('', '')).toBe(1);
  });

  it('exact and f1 take the best of several acceptable answers, and skip a case without one', () => {
    const reply = observed({ text: 'The Eiffel Tower.' });
    expect(scoreCase('exact', { answer: ['Louvre', 'eiffel tower'] }, reply)).toEqual({ score: 1 });
    expect(scoreCase('exact', { answer: 'Eiffel Tower in Paris' }, reply)).toEqual({ score: 0 });
    // "eiffel tower" vs "eiffel tower in paris": P 1, R 0.5 → 2/3; vs "louvre": 0.
    expect(scoreCase('f1', { answer: ['Louvre', 'Eiffel Tower in Paris'] }, reply).score).toBeCloseTo(2 / 3, 10);
    expect(scoreCase('f1', {}, reply)).toEqual({ score: null, skipped: 'the case has no expected.answer' });
  });

  it('contains gives the share of strings present; regex is a match or not', () => {
    const reply = observed({ text: 'Returns are accepted within 30 days with a receipt.' });
    expect(scoreCase('contains', { contains: ['30 DAYS', 'receipt', 'refund', 'store credit'] }, reply)).toEqual({ score: 0.5 });
    expect(scoreCase('regex', { regex: '\\b\\d+ days\\b' }, reply)).toEqual({ score: 1 });
    expect(scoreCase('regex', { regex: '^no' }, reply)).toEqual({ score: 0 });
    expect(scoreCase('regex', { regex: '(' }, reply).score).toBeNull();
  });

  it('citations reports recall and precision and scores their F1', () => {
    // Expected a, b, c; cited b, c, d, e → 2 hits: recall 2/3, precision 2/4, F1 = 2·(2/3)(1/2)/(2/3+1/2) = 4/7.
    const s = scoreCase('citations', { sources: ['a.md', 'b.md', 'c.md'] }, observed({ sources: ['b.md', 'c.md', 'd.md', 'e.md'] }));
    expect(s.score).toBeCloseTo(4 / 7, 10);
    expect(s.detail).toEqual({ recall: 2 / 3, precision: 0.5 });
    expect(scoreCase('citations', { sources: ['a.md'] }, observed()).score).toBe(0);
    expect(scoreCase('citations', { sources: [] }, observed())).toEqual({ score: 1, detail: { recall: 1, precision: 1 } });
    expect(scoreCase('citations', {}, observed()).score).toBeNull();
  });

  it('tool_calls matches names and argument subsets, each call used once', () => {
    const calls = observed({ toolCalls: [{ name: 'order_status', arguments: { orderId: 17, verbose: true } }, { name: 'refund', arguments: { orderId: '17', amount: 5 } }] });
    // The number 17 and the string "17" are one argument; extra arguments do not matter.
    expect(scoreCase('tool_calls', { toolCalls: [{ name: 'order_status', arguments: { orderId: '17' } }, { name: 'refund', arguments: { orderId: 17 } }] }, calls)).toEqual({ score: 1 });
    // Two expected calls of one tool, one made: 1 of 2.
    expect(scoreCase('tool_calls', { toolCalls: [{ name: 'order_status' }, { name: 'order_status' }] }, calls)).toEqual({ score: 0.5 });
    expect(scoreCase('tool_calls', { toolCalls: [{ name: 'refund', arguments: { amount: 6 } }] }, calls)).toEqual({ score: 0 });
    expect(scoreCase('tool_calls', { toolCalls: [] }, calls)).toEqual({ score: 0 });
    expect(scoreCase('tool_calls', { toolCalls: [] }, observed())).toEqual({ score: 1 });
  });

  it('json_schema checks the structured output, else the text as JSON', () => {
    const schema = { type: 'object', properties: { total: { type: 'number' } }, required: ['total'] };
    expect(scoreCase('json_schema', { schema }, observed({ output: { total: 3 } }))).toEqual({ score: 1 });
    expect(scoreCase('json_schema', { schema }, observed({ text: '{"total": "three"}' }))).toEqual({ score: 0 });
    expect(scoreCase('json_schema', { schema }, observed({ text: 'not json' }))).toEqual({ score: 0 });
    expect(scoreCase('json_schema', { schema }, observed({ text: '{"total": 4}' }))).toEqual({ score: 1 });
  });

  it('refusal tells a reply that says it cannot answer from one that answers', () => {
    expect(isRefusal("I couldn't find anything about that in the connected knowledge: no passage matched the question.")).toBe(true);
    expect(isRefusal('I don’t know.')).toBe(true);
    expect(isRefusal('The help centre does not cover that.')).toBe(true);
    expect(isRefusal('Items can be returned within 30 days.')).toBe(false);
    expect(scoreCase('refusal', { refuses: true }, observed({ text: 'I cannot answer that.' }))).toEqual({ score: 1 });
    expect(scoreCase('refusal', { refuses: false }, observed({ text: 'I cannot answer that.' }))).toEqual({ score: 0 });
  });

  it('latency and cost score 1 within their limit, the limit over the value past it, the case’s limit first', () => {
    expect(scoreCase('latency', {}, observed({ latencyMs: 400 }), { maxLatencyMs: 500 })).toEqual({ score: 1 });
    expect(scoreCase('latency', { maxLatencyMs: 100 }, observed({ latencyMs: 400 }), { maxLatencyMs: 500 })).toEqual({ score: 0.25 });
    expect(scoreCase('latency', {}, observed()).score).toBeNull();
    expect(scoreCase('cost', {}, observed({ costUsd: 0.004 }), { maxCostUsd: 0.001 })).toEqual({ score: 0.25 });
    expect(scoreCase('cost', {}, observed({ costUsd: null }), { maxCostUsd: 0.001 }).score).toBeNull();
  });
});
