import { describe, expect, it } from 'vitest';
import { edgesOf } from '../console/src/components/step-edges';

describe("the console's step graph", () => {
  it('follows the previous step unless dependsOn says otherwise', () => {
    expect(edgesOf([{ id: 'a', type: 'transform' }, { id: 'b', type: 'transform' }, { id: 'c', type: 'transform', dependsOn: ['a'] }])).toEqual([
      { from: 'a', to: 'b', label: undefined },
      { from: 'a', to: 'c', label: undefined },
    ]);
  });

  it('labels a when category and a branch that follows its condition directly', () => {
    const edges = edgesOf([
      { id: 'kind', type: 'classification' },
      { id: 'big', type: 'condition', then: ['approve'] },
      { id: 'approve', type: 'human', when: { step: 'kind', category: 'refund' }, dependsOn: ['kind', 'big'] },
    ]);
    expect(edges).toContainEqual({ from: 'big', to: 'approve', label: 'then' });
    expect(edges).toContainEqual({ from: 'kind', to: 'approve', label: '= refund' });
    expect(edges.some((e) => e.branch)).toBe(false);
  });

  it('draws a dashed branch to a step that runs later but not straight after the condition', () => {
    const edges = edgesOf([
      { id: 'check', type: 'condition', then: ['big'], else: ['small'] },
      { id: 'big', type: 'transform' },
      { id: 'small', type: 'transform' },
    ]);
    expect(edges).toEqual([
      { from: 'check', to: 'big', label: 'then' },
      { from: 'big', to: 'small', label: undefined },
      { from: 'check', to: 'small', label: 'else', branch: true },
    ]);
  });

  it('draws nothing to a step that does not exist (yet: the editor draws while you type)', () => {
    expect(edgesOf([{ id: 'check', type: 'condition', else: ['missing'] }, { id: 'b', type: 'transform', dependsOn: ['nope'] }])).toEqual([]);
  });
});
