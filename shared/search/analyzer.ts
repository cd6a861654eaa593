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
const ASCII = /^[\x00-\x7f]*$/;
const MAX_TOKEN_LENGTH = 64;

/** Where an identifier's words meet: `setErrorHandler` → set|Error|Handler, `XMLParser` → XML|Parser. */
const CAMEL_BOUNDARY = /(?<=\p{Ll})(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})/u;

function term(token: string): string | undefined {
  if (token.length === 0 || token.length > MAX_TOKEN_LENGTH || STOP_WORDS.has(token)) return undefined;
  return /^\p{N}+$/u.test(token) ? token : stemmer(token);
}

/**
 * The words of an identifier (`setErrorHandler`, `XMLParser`), or undefined for a word that is not
 * one: names and acronyms with a case change (`McLuhan`, `MeSH`, `PhD`, `IRPs`) stay whole — every
 * word after the first must be a real word of three letters or more, and so must the first when it
 * starts in upper case (or be an acronym of three letters or more, as in `XMLParser`).
 */
function identifierWords(token: string): string[] | undefined {
  const words = token.split(CAMEL_BOUNDARY);
  if (words.length < 2) return undefined;
  const word = (w: string) => w.length >= 3 && /\p{Ll}/u.test(w);
  const firstOk = /^\p{Ll}/u.test(words[0]!) || word(words[0]!) || /^\p{Lu}{3,}$/u.test(words[0]!);
  return firstOk && words.slice(1).every(word) ? words : undefined;
}

/**
 * A word of an identifier, and for an agent noun the verb it names (`Handler` → handler, handl;
 * `Parser` → parser, pars; `Logger` → logger, log), since questions ask how to handle, parse or log.
 * Only inside identifiers: prose keeps plain stemming.
 */
function identifierTerms(word: string): string[] {
  const whole = term(word);
  if (whole === undefined) return [];
  if (word.length < 6 || !word.endsWith('er')) return [whole];
  const base = word.slice(0, -2).replace(/(\p{L})\1$/u, '$1');
  const verbs = [term(base), term(`${base}e`)].filter((t): t is string => t !== undefined && t !== whole);
  return [whole, ...new Set(verbs)];
}

/**
 * Terms of a text, in order (repeats kept: term frequencies come from them). An identifier written
 * in camelCase is its own term and also its words' (`bodyLimit` → bodylimit, bodi, limit), so
 * documentation about `setErrorHandler` answers a question about an "error handler".
 */
export function analyze(text: string): string[] {
  const terms: string[] = [];
  // ASCII is all NFKD leaves as it is, with no marks to strip: most text skips both passes.
  const folded = ASCII.test(text) ? text : text.normalize('NFKD').replace(/\p{M}+/gu, '');
  // `match` gives the tokens as strings; `matchAll` would build a match object for each.
  for (const raw of folded.match(TOKEN) ?? []) {
    let found = tokenTerms.get(raw);
    if (found === undefined) {
      found = termsOfToken(raw);
      if (tokenTerms.size >= TOKEN_CACHE_SIZE) tokenTerms.clear();
      tokenTerms.set(raw, found);
    }
    for (const t of found) terms.push(t);
  }
  return terms;
}

/**
 * Terms by token, as `termsOfToken` gives them: words recur (Zipf), and stemming was most of the
 * time indexing spent analysing. Bounded, and emptied when full: the answer never depends on it.
 */
const tokenTerms = new Map<string, readonly string[]>();
const TOKEN_CACHE_SIZE = 100_000;

function termsOfToken(token: string): string[] {
  const apostrophe = token.search(/['’]/);
  const raw = apostrophe >= 0 ? token.slice(0, apostrophe) : token; // possessives and contractions
  const terms: string[] = [];
  const whole = term(raw.toLowerCase());
  if (whole !== undefined) terms.push(whole);
  const words = identifierWords(raw);
  if (words) for (const word of words) terms.push(...identifierTerms(word.toLowerCase()));
  return terms;
}

/** Term → frequency. */
export function termFrequencies(terms: string[]): Map<string, number> {
  const tf = new Map<string, number>();
  for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
  return tf;
}
