import { describe, expect, it } from 'vitest';
import { isId, newId } from '../shared/ids';

describe('ids', () => {
  it('are distinct within one millisecond, across the random pool being refilled, and well formed', () => {
    const ids = Array.from({ length: 5_000 }, () => newId('request', 1_700_000_000_000));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id) => isId('request', id))).toBe(true);
    // The random part varies in every position (a pool read at the wrong offset would repeat).
    for (let position = 14; position < 30; position++) expect(new Set(ids.map((id) => id[position])).size).toBeGreaterThan(20);
  });

  it('sort in the order of their times', () => {
    const times = [1_600_000_000_000, 1_600_000_000_001, 1_700_000_000_000, 2_000_000_000_000];
    const ids = times.map((t) => newId('agent', t));
    expect([...ids].sort()).toEqual(ids);
  });
});
