import { stemmer } from 'stemmer';

/**
 * English analysis shared by indexing and querying: Unicode-aware tokens, folded to lower case
 * without diacritics, possessives dropped, stop words removed, Porter-stemmed. Deterministic and
 * dictionary-free, so the index and every query agree exactly.
 */

// Lucene's English stop set plus the function words of natural-language questions
// ("what are the problems of…"), which otherwise dominate verbose queries.
const STOP_WORDS = new Set(
  (
    'a an and are as at be but by for if in into is it no not of on or such that the their then there ' +
    'these they this to was will with ' +
    'about above after again against all am any because been before being below between both can could ' +
    'did do does doing down during each few from further had has have having he her here hers herself ' +
    'him himself his how i its itself just me more most my myself nor now off once only other our ours ' +
    'ourselves out over own same she should so some than those through too under until up very we were ' +
    'what when where which while who whom why would you your yours yourself yourselves'
  ).split(' '),
);

const TOKEN = /[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu;
const MAX_TOKEN_LENGTH = 64;

function fold(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase();
}

/** Terms of a text, in order (repeats kept: term frequencies come from them). */
export function analyze(text: string): string[] {
  const terms: string[] = [];
  for (const match of fold(text).matchAll(TOKEN)) {
    let token = match[0];
    const apostrophe = token.search(/['’]/);
    if (apostrophe >= 0) token = token.slice(0, apostrophe); // possessives and contractions
    if (token.length === 0 || token.length > MAX_TOKEN_LENGTH || STOP_WORDS.has(token)) continue;
    terms.push(/^\p{N}+$/u.test(token) ? token : stemmer(token));
  }
  return terms;
}

/** Term → frequency. */
export function termFrequencies(terms: string[]): Map<string, number> {
  const tf = new Map<string, number>();
  for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
  return tf;
}
