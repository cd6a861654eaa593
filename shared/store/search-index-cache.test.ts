import { describe, expect, it } from 'vitest';
import { scopeOf } from '../tenancy';
import { lruCache } from './lru-cache';
import { encodePostingsV2 } from './postings-codec';
import { searchIndexCache } from './search-index-cache';

const scope = scopeOf('ten_cache');
const SPAN = 1000;
const chunk = (docNo: number) => ({ docNo, title: 't', text: `chunk ${docNo}`, terms: 'a:1' });
const posting = (segNo: number) => ({ segNo, bytes: new Uint8Array([segNo, 1, 2]) });

describe('the search index cache', () => {
  it('parses a kept chunk once, and again only for another parse or another chunk object', () => {
    const cache = searchIndexCache<ReturnType<typeof chunk>>((docNo) => Math.floor(docNo / SPAN));
    let parses = 0;
    const terms = (c: ReturnType<typeof chunk>) => ({ parse: ++parses, terms: c.terms });
    const kept = chunk(1);
    const first = cache.parsedChunk(kept, terms);
    expect(cache.parsedChunk(kept, terms)).toBe(first);
    expect(parses).toBe(1);
    // The same chunk read again is another object: parsed anew.
    expect(cache.parsedChunk(chunk(1), terms)).toEqual({ parse: 2, terms: 'a:1' });
    // Another parse of the kept chunk is not given the first one's result.
    expect(cache.parsedChunk(kept, (c) => c.title)).toBe('t');
  });

  it('serves a term from memory only for segments seen live before the read, and reads again when a segment went live since', () => {
    const cache = searchIndexCache<ReturnType<typeof chunk>>((docNo) => Math.floor(docNo / SPAN));
    cache.observeLive(scope, 'ks_1', [0, 1], 1_000);
    // Issued only 2 s after the segments were seen live: too soon to trust (eventual consistency).
    cache.keepTermItems(scope, 'ks_1', 'parcel', [posting(0)], 3_000);
    expect(cache.termItems(scope, 'ks_1', 'parcel', [0, 1])).toBeUndefined();
    // Issued 10 s after: complete for segments 0 and 1 (1 simply has no posting of the term).
    cache.keepTermItems(scope, 'ks_1', 'parcel', [posting(0)], 11_000);
    expect(cache.termItems(scope, 'ks_1', 'parcel', [0, 1])).toEqual([posting(0)]);
    // Segment 2 went live since: the entry does not cover it, so the caller reads the term again.
    cache.observeLive(scope, 'ks_1', [0, 1, 2], 20_000);
    expect(cache.termItems(scope, 'ks_1', 'parcel', [0, 1, 2])).toBeUndefined();
    // Postings of a segment not yet settled are never kept, even when the read returned them.
    cache.keepTermItems(scope, 'ks_1', 'parcel', [posting(0), posting(2)], 21_000);
    expect(cache.termItems(scope, 'ks_1', 'parcel', [0, 1])).toEqual([posting(0)]);
    expect(cache.termItems(scope, 'ks_1', 'parcel', [0, 1, 2])).toBeUndefined();
    // Another source, another tenant: nothing shared.
    expect(cache.termItems(scope, 'ks_2', 'parcel', [0])).toBeUndefined();
    expect(cache.termItems(scopeOf('ten_other'), 'ks_1', 'parcel', [0])).toBeUndefined();
  });

  it('keeps postings decoded by the bytes they came from, the oldest going first past a quarter of its budget', () => {
    const cache = searchIndexCache<ReturnType<typeof chunk>>((docNo) => Math.floor(docNo / SPAN), 64_000);
    const termBytes = (n: number) => encodePostingsV2(Array.from({ length: n }, (_, i) => ({ doc: i * 3, tfBody: 1 + (i % 4), tfTitle: i % 2 })));
    const first = termBytes(300);
    const postings = cache.decodedPostings(first);
    expect(postings.count).toBe(300);
    expect([postings.docs[0], postings.docs[299], postings.tfBody[5], postings.tfTitle[5]]).toEqual([0, 897, 2, 1]);
    expect(cache.decodedPostings(first)).toBe(postings); // the same bytes again: not decoded again
    // About 6.4 KB each (the tf-parts ranking keeps beside them counted) against a 16 KB quarter: two fit, the third pushes the first out.
    const [second, third] = [termBytes(300), termBytes(300)];
    const kept = cache.decodedPostings(second);
    cache.decodedPostings(third);
    expect(cache.decodedPostings(second)).toBe(kept);
    const again = cache.decodedPostings(first);
    expect(again).not.toBe(postings);
    expect(again).toEqual(postings);
  });

  it('keeps chunks of settled segments only', () => {
    const cache = searchIndexCache<ReturnType<typeof chunk>>((docNo) => Math.floor(docNo / SPAN));
    cache.observeLive(scope, 'ks_1', [0], 1_000);
    cache.keepChunk(scope, 'ks_1', chunk(5), 10_000);
    cache.keepChunk(scope, 'ks_1', chunk(1005), 10_000); // segment 1: never seen live
    expect(cache.chunk(scope, 'ks_1', 5)).toEqual(chunk(5));
    expect(cache.chunk(scope, 'ks_1', 1005)).toBeUndefined();
  });

  it('evicts the least recently used entries beyond its budget', () => {
    const lru = lruCache<string>(100);
    lru.set('a', 'A', 40);
    lru.set('b', 'B', 40);
    expect(lru.get('a')).toBe('A'); // a is now the most recent
    lru.set('c', 'C', 40);
    expect(lru.get('b')).toBeUndefined();
    expect(lru.get('a')).toBe('A');
    expect(lru.get('c')).toBe('C');
    expect(lru.bytes).toBe(80);
    lru.set('huge', 'H', 101);
    expect(lru.get('huge')).toBeUndefined();
  });
});
