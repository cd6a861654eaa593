import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { localKeyWrapper } from '../shared/secrets/secret-box';
import { analyze } from '../shared/search/analyzer';
import { chunkBlocks } from '../shared/search/chunker';
import { extractHtml, extractMarkdown, extractText } from '../shared/search/extract';
import { decodePostings, encodePostings } from '../shared/store/postings-codec';
import { expandQuery, idf, scoreBm25f, topDocs } from '../shared/search/ranker';

describe('analysis', () => {
  it('folds case and accents, drops stop words and possessives, stems', () => {
    expect(analyze("The Library's cataloguing of Éditions, and what retrieving means")).toEqual(['librari', 'catalogu', 'edit', 'retriev', 'mean']);
    expect(analyze('What are the problems?')).toEqual(['problem']);
    expect(analyze('2024 ISBN 978')).toEqual(['2024', 'isbn', '978']);
  });
});

describe('extraction and chunking', () => {
  it('keeps Markdown sections apart and titles chunks with their headings', () => {
    const { title, blocks } = extractMarkdown('# Guide\n\nIntro.\n\n## Returns\n\n- Within 30 days.\n\n```\ncode stays\n```\n\n## Shipping\n\nFast.');
    expect(title).toBe('Guide');
    const chunks = chunkBlocks(title, blocks);
    expect(chunks.map((c) => c.title)).toEqual(['Guide', 'Guide › Returns', 'Guide › Shipping']);
    expect(chunks[1]!.text).toContain('Within 30 days.');
    expect(chunks[1]!.text).toContain('code stays');
  });

  it('drops scripts and styles from HTML', () => {
    const { title, blocks } = extractHtml('<title>T</title><style>p{}</style><h2>Sec</h2><p>Body &amp; more</p><script>evil()</script>');
    expect(title).toBe('T');
    expect(blocks).toEqual([{ headings: ['Sec'], text: 'Body & more' }]);
  });

  it('splits long text at sentences within the size, with overlap', () => {
    const sentence = 'The quick brown fox jumps over the lazy dog. ';
    const chunks = chunkBlocks(undefined, extractText(sentence.repeat(100)).blocks, { size: 500, overlap: 100 });
    expect(chunks.length).toBeGreaterThan(8);
    for (const c of chunks) expect(c.text.length).toBeLessThanOrEqual(600);
    expect(chunks[1]!.text.startsWith('The quick brown fox')).toBe(true);
    expect(chunks.every((c) => c.text.trim().endsWith('dog.'))).toBe(true);
  });
});

describe('postings codec and ranking', () => {
  it('round-trips postings, including large numbers', () => {
    const postings = [
      { doc: 3, tfBody: 1, tfTitle: 0, lenBody: 40, lenTitle: 2 },
      { doc: 1_000_000, tfBody: 300, tfTitle: 2, lenBody: 70_000, lenTitle: 9 },
    ];
    expect(decodePostings(encodePostings(postings))).toEqual(postings);
  });

  it('prefers a rarer term, a title match and a shorter document', () => {
    const stats = { documents: 100, totalBodyLength: 10_000, totalTitleLength: 300 };
    expect(idf(100, 1)).toBeGreaterThan(idf(100, 50));
    const scores = scoreBm25f(new Map([['x', 1]]), new Map([['x', [
      { doc: 1, tfBody: 1, tfTitle: 0, lenBody: 100, lenTitle: 3 },
      { doc: 2, tfBody: 1, tfTitle: 1, lenBody: 100, lenTitle: 3 },
      { doc: 3, tfBody: 1, tfTitle: 0, lenBody: 20, lenTitle: 3 },
    ]]]), stats);
    expect(topDocs(scores, 3).map((d) => d.doc)).toEqual([2, 3, 1]);
  });

  it('expands a query with the terms of its top documents', () => {
    const expanded = expandQuery(new Map([['bike', 1]]), [{ doc: 1, score: 2 }], new Map([[1, { doc: 1, terms: new Map([['bike', 2], ['chain', 3]]), length: 5 }]]));
    expect([...expanded.keys()]).toEqual(['bike', 'chain']);
    expect(expanded.get('bike')!).toBeGreaterThan(expanded.get('chain')!);
  });
});

describe('sealing secrets', () => {
  it('opens only with the same key and the same context', async () => {
    const wrapper = localKeyWrapper(randomBytes(32));
    const { plaintext, wrapped } = await wrapper.generate({ tenantId: 'a', sourceId: 'b' });
    expect((await wrapper.unwrap(wrapped, { tenantId: 'a', sourceId: 'b' })).equals(plaintext)).toBe(true);
    await expect(wrapper.unwrap(wrapped, { tenantId: 'a', sourceId: 'other' })).rejects.toThrow();
    await expect(localKeyWrapper(randomBytes(32)).unwrap(wrapped, { tenantId: 'a', sourceId: 'b' })).rejects.toThrow();
    wrapped[wrapped.length - 1]! ^= 1;
    await expect(wrapper.unwrap(wrapped, { tenantId: 'a', sourceId: 'b' })).rejects.toThrow();
  });
});

describe('postings format 2', () => {
  it('round-trips bit-packed postings of any size, gap and frequency, and counts them from the header', async () => {
    const { encodePostingsV2, decodePostingsV2, countPostingsV2 } = await import('../shared/store/postings-codec');
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (const n of [0, 1, 127, 128, 129, 700]) {
      const docs = new Set<number>();
      // Gaps of a few bits, of 20 and of up to 30 (past the decoder's 24-bit buffer).
      while (docs.size < n) docs.add(Math.floor(random() * (random() < 0.5 ? 2_000 : random() < 0.7 ? 1_000_000 : 2 ** 30)));
      const postings = [...docs]
        .sort((a, b) => a - b)
        .map((doc) => ({ doc, tfBody: Math.floor(random() * (random() < 0.1 ? 5_000 : 4)), tfTitle: random() < 0.8 ? 0 : Math.floor(random() * 9) }));
      const bytes = encodePostingsV2(postings);
      const { count, docs: decodedDocs, tfBody, tfTitle } = decodePostingsV2(bytes);
      expect(Array.from({ length: count }, (_, k) => ({ doc: decodedDocs[k], tfBody: tfBody[k], tfTitle: tfTitle[k] }))).toEqual(postings);
      expect(countPostingsV2(bytes)).toBe(n);
    }
  });

  it('takes about a byte a posting for a common term (format 1 took six to eight)', async () => {
    const { encodePostingsV2, encodePostings } = await import('../shared/store/postings-codec');
    const postings = Array.from({ length: 5_000 }, (_, i) => ({ doc: i * 3 + (i % 2), tfBody: 1 + (i % 3 === 0 ? 1 : 0), tfTitle: 0, lenBody: 60 + (i % 90), lenTitle: 4 }));
    expect(encodePostingsV2(postings).length / postings.length).toBeLessThan(1.1);
    expect(encodePostings(postings).length / postings.length).toBeGreaterThan(5);
  });
});

describe('segment score arrays', () => {
  it('rank exactly as BM25F over decoded postings, feedback included', async () => {
    const { SegmentScores } = await import('../shared/search/segment-scores');
    const { DEFAULT_RANK_PARAMS, scoreBm25f, expandQuery, rm3 } = await import('../shared/search/ranker');
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const span = 2 ** 20;
    const terms = ['a', 'b', 'c', 'd', 'e'];
    const items = new Map<string, Array<{ segNo: number; bytes: Uint8Array }>>();
    const postings = new Map<string, Array<{ doc: number; tfBody: number; tfTitle: number; lenBody: number; lenTitle: number }>>();
    const lengths = new Map<number, [number, number]>();
    for (const segNo of [3, 4]) for (let local = 0; local < 50; local++) lengths.set(segNo * span + local, [5 + Math.floor(random() * 200), Math.floor(random() * 6)]);
    for (const term of terms) {
      for (const segNo of [3, 4]) {
        const list = [];
        for (let local = 0; local < 50; local++) {
          if (random() < 0.4) continue;
          const [lenBody, lenTitle] = lengths.get(segNo * span + local)!;
          list.push({ doc: local, tfBody: 1 + Math.floor(random() * 5), tfTitle: Math.floor(random() * 2), lenBody, lenTitle });
        }
        items.set(term, [...(items.get(term) ?? []), { segNo, bytes: encodePostings(list) }]);
        postings.set(term, [...(postings.get(term) ?? []), ...list.map((p) => ({ ...p, doc: segNo * span + p.doc }))]);
      }
    }
    const stats = { documents: 100, totalBodyLength: [...lengths.values()].reduce((s, [b]) => s + b, 0), totalTitleLength: [...lengths.values()].reduce((s, [, t]) => s + t, 0) };
    const segments = new Map([3, 4].map((segNo) => [segNo, { segNo, span, size: 50 }]));
    const query = new Map([['a', 2], ['c', 1]]);
    const scorer = new SegmentScores(segments, stats, DEFAULT_RANK_PARAMS);
    for (const [t, w] of query) scorer.addTerm(items.get(t)!, w);
    const reference = scoreBm25f(query, postings, stats);
    const first = topDocs(reference, 10);
    expect(scorer.top(10).map((d) => d.doc)).toEqual(first.map((d) => d.doc));
    // Feedback as a change of weights gives the same ranking as scoring the expanded query.
    const vectors = new Map(first.map((d) => [d.doc, { doc: d.doc, terms: new Map([['b', 2], ['e', 1], ['a', 1]]), length: 4 }]));
    const { scale, feedback } = rm3(query, first, vectors);
    scorer.scale(scale);
    for (const [t, w] of feedback) scorer.addTerm(items.get(t)!, w);
    const expanded = scoreBm25f(expandQuery(query, first, vectors), postings, stats);
    const fast = scorer.top(20);
    const slow = topDocs(expanded, 20);
    expect(fast.map((d) => d.doc)).toEqual(slow.map((d) => d.doc));
    fast.forEach((d, i) => expect(d.score).toBeCloseTo(slow[i]!.score, 9));
  });
});

describe('kept tf-parts', () => {
  it('are reused only under the statistics they were computed with, and score as computing them afresh does', async () => {
    const { SegmentScores } = await import('../shared/search/segment-scores');
    const { DEFAULT_RANK_PARAMS } = await import('../shared/search/ranker');
    const { encodePostingsV2, decodePostingsV2, POSTINGS_FORMAT } = await import('../shared/store/postings-codec');
    const bytes = encodePostingsV2(Array.from({ length: 40 }, (_, i) => ({ doc: i, tfBody: 1 + (i % 4), tfTitle: i % 2 })));
    const norms = { lenBody: Int32Array.from({ length: 40 }, (_, i) => 20 + i * 3), lenTitle: Int32Array.from({ length: 40 }, (_, i) => i % 5) };
    const segments = new Map([[0, { segNo: 0, span: 2 ** 20, size: 40, format: POSTINGS_FORMAT, norms }]]);
    // As the index cache does: the same bytes, the same decoded object (which keeps the tf-parts).
    const kept = new Map<Uint8Array, ReturnType<typeof decodePostingsV2>>();
    const cached = (b: Uint8Array) => kept.get(b) ?? kept.set(b, decodePostingsV2(b)).get(b)!;
    const scores = (stats: { documents: number; totalBodyLength: number; totalTitleLength: number }, decoded: typeof decodePostingsV2) => {
      const scorer = new SegmentScores(segments, stats, DEFAULT_RANK_PARAMS, decoded);
      scorer.addTerm([{ segNo: 0, bytes }], 1.5);
      return scorer.top(40);
    };
    const stats = { documents: 40, totalBodyLength: 2_900, totalTitleLength: 80 };
    const grown = { documents: 90, totalBodyLength: 12_000, totalTitleLength: 150 };
    expect(scores(stats, cached)).toEqual(scores(stats, decodePostingsV2)); // computed and kept
    expect(scores(stats, cached)).toEqual(scores(stats, decodePostingsV2)); // kept, reused
    expect(scores(grown, cached)).toEqual(scores(grown, decodePostingsV2)); // other statistics: computed again
    expect(scores(grown, cached)).not.toEqual(scores(stats, decodePostingsV2));
  });
});

describe('the built-in engine', () => {
  it('classifies by lexical similarity to category names, descriptions and examples', async () => {
    const { classifyLocally } = await import('../shared/models/local-engine');
    const categories = [
      { name: 'billing', description: 'invoices, payments, refunds and charges', examples: ['I was charged twice'] },
      { name: 'shipping', description: 'delivery, parcels, tracking', examples: ['where is my parcel'] },
      { name: 'other' },
    ];
    const billing = classifyLocally('Why was my card charged twice for one invoice?', categories);
    expect(billing.category).toBe('billing');
    expect(classifyLocally('My parcel tracking has not moved', categories).category).toBe('shipping');
    expect(Object.values(billing.scores).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
    expect(billing.confidence).toBe(billing.scores.billing);
    expect(classifyLocally('Why was my card charged twice for one invoice?', categories)).toEqual(billing); // deterministic
  });

  it('answers the catch-all category (or the one named fallback), with a guess’s confidence, when no category has evidence', async () => {
    const { classifyLocally } = await import('../shared/models/local-engine');
    const plain = ['billing', 'shipping', 'other'].map((name) => ({ name }));
    const peru = classifyLocally('What is the capital of Peru?', plain);
    expect(peru.category).toBe('other');
    expect(peru.confidence).toBeCloseTo(1 / 3, 9);
    expect(classifyLocally('What is the capital of Peru?', [{ name: 'billing' }, { name: 'Misc' }, { name: 'shipping' }]).category).toBe('Misc');
    expect(classifyLocally('What is the capital of Peru?', plain, 'shipping').category).toBe('shipping');
    // Evidence still wins over the fallback.
    expect(classifyLocally('My shipping is late', plain, 'billing').category).toBe('shipping');
  });
});
