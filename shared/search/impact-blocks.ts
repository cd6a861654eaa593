import { encodeDirectory, encodePostingsV2, envelopeOf, type Envelope, type Posting } from '../store/postings-codec';
import type { TermLayout } from '../store/search-index';
import { bm25fTermFrequency, DEFAULT_RANK_PARAMS, type CorpusStats, type RankParams } from './ranker';
import { indexTuning } from './index-tuning';

/**
 * Impact-ordered postings. A term's postings in a segment that has more than a block's worth are
 * split by how much they score (with the segment's own average lengths) into two tiers, cut into
 * blocks, and each block is stored as its own item under a sort key that starts with its impact:
 * one DynamoDB Query reads a term's best blocks first, across segments. The segment's directory item lists every
 * block's envelope, from which a search computes an exact upper bound with the corpus statistics
 * of the moment (see pruned-ranking.ts). Smaller lists stay inline in the directory item.
 */

export const IMPACT_LEVELS = 1_000_000;

/** An upper bound of the tf-part of any posting in the envelope (exact for a posting equal to it). */
export function envelopeBound(tfPart: ReturnType<typeof bm25fTermFrequency>, env: Envelope): number {
  return tfPart(env.tfBody, env.tfTitle, env.lenBody, env.lenTitle);
}

/** Where the tiers end, as shares of a term's postings ranked by impact: the best eighth, the rest (three tiers read less and pack worse, measured). */
const TIERS = [1 / 8, 1];

/**
 * How a segment's postings of one term are laid out, with the segment's own statistics standing
 * in for the corpus's: inline when they fit one block; otherwise in two tiers by impact (the best
 * eighth, then the rest), each cut into blocks in chunk order (so gaps stay small and bit-pack
 * well), each block with its envelope and an impact key that sorts the best blocks first.
 */
export function layoutTerm(postings: Posting[], segmentStats: CorpusStats, params: RankParams = DEFAULT_RANK_PARAMS, blockPostings = indexTuning.blockPostings): TermLayout {
  if (postings.length <= blockPostings) return { inline: encodePostingsV2(postings) };
  const tfPart = bm25fTermFrequency(params, segmentStats);
  const ranked = postings
    .map((p) => ({ p, impact: tfPart(p.tfBody, p.tfTitle, p.lenBody, p.lenTitle) }))
    .sort((a, b) => b.impact - a.impact || a.p.doc - b.p.doc)
    .map((r) => r.p);
  const cuts = [0, ...TIERS.map((share) => Math.ceil(ranked.length * share))];
  const blocks: NonNullable<TermLayout['blocks']> = [];
  const entries = [];
  for (const tier of TIERS.map((_, i) => ranked.slice(cuts[i], cuts[i + 1]))) {
    if (tier.length === 0) continue;
    tier.sort((a, b) => a.doc - b.doc);
    for (let i = 0; i < tier.length; i += blockPostings) {
      const group = tier.slice(i, i + blockPostings);
      const env = envelopeOf(group);
      // Lower keys sort first: the best blocks come first in a Query.
      const impact = Math.min(IMPACT_LEVELS - 1, Math.max(0, Math.floor((1 - envelopeBound(tfPart, env) / (params.k1 + 1)) * IMPACT_LEVELS)));
      entries.push({ impact, env });
      blocks.push({ impact, bytes: encodePostingsV2(group) });
    }
  }
  return { count: postings.length, directory: encodeDirectory(entries), blocks };
}
