/**
 * The index's sizes and thresholds: general defaults, changed only by tests and the bench (to
 * make small corpora exercise blocks and compaction).
 */
export const indexTuning = {
  /** Postings per block (about a byte each, bit-packed): a block item stays near 2 KB, half a read unit. */
  blockPostings: 2048,
  /**
   * Blocks a term must have left (about 64,000 postings, some 8 read units) for a search to read
   * them in waves and perhaps stop early; a smaller term is read whole in one Query, which costs
   * less than several (half a read unit at least each). On the bench's keyword queries stopping
   * early did not pay below this (docs/search-index.md).
   */
  pruneFromBlocks: 32,
  /** Compaction when a source has more live segments than this… */
  compactAfterSegments: 8,
  /** …or this share of its chunks is deleted (and at least `compactAfterDeletedChunks`: small sources cost little either way). */
  compactAfterDeletedShare: 0.2,
  compactAfterDeletedChunks: 1000,
  /**
   * Chunks in one segment: what a sync sizes its segments for (estimated from the rows' or files'
   * bytes) and what compaction merges into. A search keeps one score array of this length per segment.
   */
  segmentChunks: 1 << 16,
  /** A compaction removes the old items this long after the swap: searches that read the old segment list still find them. */
  compactionGraceSeconds: 60,
};
