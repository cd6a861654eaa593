import { describe, expect, it } from 'vitest';
import { RECENT_MS, recentReads } from './recent-reads';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('recent reads', () => {
  it('serve a value again within RECENT_MS, then read it afresh', async () => {
    const recent = recentReads<{ v: number }>(10);
    let loads = 0;
    const load = async () => ({ v: ++loads });
    expect(await recent.read('a', load)).toEqual({ v: 1 });
    expect(await recent.read('a', load)).toEqual({ v: 1 });
    expect(await recent.read('b', load)).toEqual({ v: 2 });
    await sleep(RECENT_MS + 50);
    expect(await recent.read('a', load)).toEqual({ v: 3 });
  });

  it('forget what this instance wrote, keep nothing read while a write was under way, and keep only what `keep` accepts', async () => {
    const recent = recentReads<string>(10);
    let value = 'old';
    expect(await recent.read('k', async () => value)).toBe('old');
    value = 'new';
    recent.forget('k');
    expect(await recent.read('k', async () => value)).toBe('new');

    // A read that began before a write and ended after it: answered, never kept.
    recent.forget('k');
    let release!: () => void;
    const slow = recent.read('k', async () => {
      await new Promise<void>((r) => (release = r));
      return 'stale';
    });
    await sleep(5);
    recent.forget('k');
    release();
    expect(await slow).toBe('stale');
    expect(await recent.read('k', async () => 'fresh')).toBe('fresh');

    expect(await recent.read('s', async () => 'syncing', (v) => v === 'ready')).toBe('syncing');
    expect(await recent.read('s', async () => 'ready', (v) => v === 'ready')).toBe('ready');
    expect(await recent.read('s', async () => 'never read')).toBe('ready');
    // Nothing found is never kept.
    expect(await recent.read('none', async () => undefined)).toBeUndefined();
    expect(await recent.read('none', async () => 'there now')).toBe('there now');
  });

  it('hold a bounded number of entries, the oldest going first', async () => {
    const recent = recentReads<number>(2);
    for (const key of ['a', 'b', 'c']) await recent.read(key, async () => 1);
    expect(await recent.read('a', async () => 2)).toBe(2);
    expect(await recent.read('c', async () => 2)).toBe(1);
  });
});
