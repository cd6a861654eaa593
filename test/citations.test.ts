import { describe, expect, it } from 'vitest';
import { citedOnly } from '../shared/agents/citations';

describe('a reply’s sources are the passages it cites', () => {
  const given = ['a', 'b', 'c', 'd'];

  it('keeps the cited passages in the order of their numbers and renumbers the marks to them', () => {
    expect(citedOnly('Paris is big [3]. It is old [1, 3]. Rivers [3][1].', given)).toEqual({ reply: 'Paris is big [2]. It is old [1, 2]. Rivers [2][1].', sources: ['a', 'c'] });
  });

  it('leaves a bracketed number that names no passage as written, and cites nothing for it', () => {
    expect(citedOnly('In [2023] it grew [2]; see [9] and [2, 9].', given)).toEqual({ reply: 'In [2023] it grew [1]; see [9] and [1, 9].', sources: ['b'] });
  });

  it('has no sources when the reply cites none', () => {
    expect(citedOnly('Hello! I found nothing.', given)).toEqual({ reply: 'Hello! I found nothing.', sources: [] });
  });
});
