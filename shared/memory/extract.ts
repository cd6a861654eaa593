/**
 * Rule-based memory extraction: entities (people, products, places, organisations, dates,
 * numbers, noun phrases) and facts about the user (subject–relation–object) from one message.
 * No model weights, deterministic; an LLM can replace it (llm-extract.ts) when one is configured.
 */
export type EntityType = 'user' | 'person' | 'place' | 'organization' | 'product' | 'date' | 'number' | 'concept';

export interface ExtractedEntity {
  label: string;
  type: EntityType;
}

export interface ExtractedFact {
  /** Facts are about the user (the speaker). */
  subject: 'user';
  relation: string;
  object: ExtractedEntity;
  /** "I no longer …", "I don't …": ends a fact instead of stating one. */
  negated: boolean;
}

export interface Extraction {
  entities: ExtractedEntity[];
  facts: ExtractedFact[];
}

/** Relations a person has one value of at a time: any new value contradicts the old one. */
export const FUNCTIONAL_RELATIONS = new Set(['name', 'lives_in', 'from', 'works_at', 'works_as', 'age']);

/** Relations whose opposite cannot hold for the same object at the same time. */
export const OPPOSITE_RELATIONS: Record<string, string> = { likes: 'dislikes', dislikes: 'likes' };

const CONTRACTIONS: Array<[RegExp, string]> = [
  [/\b(i)['’]m\b/gi, '$1 am'],
  [/\b(i)['’]ve\b/gi, '$1 have'],
  [/\b(i)['’]d\b/gi, '$1 would'],
  [/\bdon['’]t\b/gi, 'do not'],
  [/\bcan['’]t\b/gi, 'can not'],
  [/\bcannot\b/gi, 'can not'],
  [/\bain['’]t\b/gi, 'am not'],
];

const BOUNDARY = /\s*(?:,|;|:|\(|\s(?:for|on|as|with|at|in|from|by|during|every|each|whenever|than)\s|\bbut\b|\bbecause\b|\bsince\b|\bso\b|\bwhen\b|\bif\b|\band i\b|\bwhich\b|\bthat\b|\bbefore\b|\bafter\b|\buntil\b|\bplease\b)/i;
const LEADING = /^(?:(?:a|an|the|my|some|any|our|to|really|very|much|more|also|actually)\s+)+/i;
const TRAILING = /(?:\s+(?:anymore|any more|now|instead|too|as well|either|these days|nowadays|a lot|very much|please|then|lately|again))+$/i;

/** The noun phrase a pattern captured: cut at the clause's end, trimmed of articles and fillers. */
function phrase(raw: string, maxWords = 6): string | undefined {
  let text = raw.split(BOUNDARY)[0] ?? '';
  text = text.replace(/[.!?"“”]+$/g, '').trim().replace(LEADING, '').replace(TRAILING, '').trim();
  const words = text.split(/\s+/).filter(Boolean);
  if (words.length === 0 || words.length > maxWords) return words.length > maxWords ? words.slice(0, maxWords).join(' ') : undefined;
  return words.join(' ');
}

const PLACE_CUE = /\b(?:in|at|from|to|near|visiting|visit)\s+$/i;
const PERSON_CUE = /\b(?:name is|call me|called|named|with|wife|husband|partner|friend|colleague|manager|boss|son|daughter|brother|sister|mother|father|mom|dad)\s+$/i;
const ORG_SUFFIX = /\b(?:Inc|Corp|Corporation|Ltd|LLC|GmbH|AG|SA|Bank|University|Company|Co)\.?$/;
const MONTHS = 'january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec';
const DATE = new RegExp(
  `\\b(?:\\d{4}-\\d{2}-\\d{2}|\\d{1,2}/\\d{1,2}/\\d{2,4}|(?:${MONTHS})\\.? \\d{1,2}(?:st|nd|rd|th)?(?:,? \\d{4})?|\\d{1,2}(?:st|nd|rd|th)? (?:of )?(?:${MONTHS})(?:,? \\d{4})?|(?:next |last |this )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|tomorrow|yesterday|today|(?:next|last) (?:week|month|year))\\b`,
  'gi',
);
const NUMBER = /(?:[$€£]\s?\d[\d,]*(?:\.\d+)?|#\d{3,}|\b\d[\d,]*(?:\.\d+)?\s?(?:%|kg|g|km|m|cm|mi|lbs?|usd|eur|gbp|dollars|euros|years?|months?|days?|hours?)\b|\b\d{4,}\b)/gi;
/** Sentence-initial words that are capitalised only because they start the sentence. */
const COMMON_START = new Set('actually well oh sorry now just i my the a an we you he she it they our your his her their this that these those what which who when where why how hi hello hey please thanks thank yes no ok okay also and but so if can could would should will do does did is are was were am have has had'.split(' '));

function typeOfObject(label: string, relation: string): EntityType {
  if (relation === 'name') return 'person';
  if (relation === 'lives_in' || relation === 'from') return 'place';
  if (relation === 'works_at') return 'organization';
  if (relation === 'age') return 'number';
  if (new RegExp(`^${DATE.source}$`, 'i').test(label)) return 'date';
  if (/^[#$€£]?\d/.test(label)) return 'number';
  if (/\p{L}/u.test(label) && /\d|[a-z][A-Z]/.test(label)) return 'product';
  return 'concept';
}

interface Pattern {
  re: RegExp;
  relation: string | ((m: RegExpExecArray) => string);
  negated?: boolean;
  /** Proper names keep their capitalisation and stop at the first lower-case word. */
  properName?: boolean;
}

const VERB_RELATIONS: Array<[string, string]> = [
  ['prefer', 'prefers'],
  ['like|love|enjoy', 'likes'],
  ['use|am using', 'uses'],
  ['want|need|would like', 'wants'],
  ['have|own', 'has'],
  ['live in|reside in', 'lives_in'],
  ['work at|work for', 'works_at'],
  ['drive', 'drives'],
  ['eat', 'eats'],
];

const PATTERNS: Pattern[] = [
  // Negations first: "I no longer prefer X", "I do not like X anymore".
  ...VERB_RELATIONS.map(([verbs, relation]): Pattern => ({
    re: new RegExp(`\\bi (?:do not|no longer|now longer|never|stopped|am not)\\s+(?:${verbs})(?:s|d|ing)?\\s+(.+)`, 'i'),
    relation,
    negated: true,
  })),
  { re: /\bi (?:am )?no longer (?:a|an) (.+)/i, relation: 'is_a', negated: true },
  { re: /\b[Mm]y name is ([A-Z][\p{L}'-]*(?:\s+[A-Z][\p{L}'-]*){0,3})/u, relation: 'name', properName: true },
  { re: /\b[Ii] am ([A-Z][\p{L}'-]+)(?=\s*(?:[,.!?]|$| and\b))/u, relation: 'name', properName: true },
  { re: /\b(?:[Cc]all me|[Ii] am called) ([A-Z][\p{L}'-]*(?:\s+[A-Z][\p{L}'-]*){0,2})/u, relation: 'name', properName: true },
  { re: /\bi (?:live|reside|am living|am based|moved) (?:in|to) (.+)/i, relation: 'lives_in' },
  { re: /\bi am from (.+)/i, relation: 'from' },
  { re: /\bi work (?:at|for) (.+)/i, relation: 'works_at' },
  { re: /\bi work as (?:a|an) (.+)/i, relation: 'works_as' },
  { re: /\bi am (\d{1,3}) years? old\b/i, relation: 'age' },
  { re: /\bi am allergic to (.+)/i, relation: 'allergic_to' },
  { re: /\bi (?:dislike|hate|can not stand|do not like|do not enjoy|do not love)\s+(.+)/i, relation: 'dislikes' },
  { re: /\bi (?:would |much |really |strongly |usually |always )*prefers?\s+(.+)/i, relation: 'prefers' },
  { re: /\bi (?:really |also |usually |absolutely )*(?:like|love|enjoy)s?\s+(.+)/i, relation: 'likes' },
  { re: /\bi (?:(?:usually|always|mostly|also) )?(?:use|am using)\s+(.+)/i, relation: 'uses' },
  { re: /\bi (?:would like|want|need)\s+(.+)/i, relation: 'wants' },
  { re: /\bi (?:have|own) (?:a|an|two|three|several)\s+(.+)/i, relation: 'has' },
  { re: /\bi (?:ordered|bought|purchased)\s+(.+)/i, relation: 'ordered' },
  { re: /\bi (?:drive)\s+(.+)/i, relation: 'drives' },
  { re: /\bmy ((?:favou?rite |preferred |home |work |email |phone |order |account |shipping |billing )?[a-z]+(?: (?:number|address|size|color|colour|language))?) (?:is|are) (.+)/i, relation: (m) => snake(m[1]!) },
  { re: /\bi am (?:a|an) (.+)/i, relation: 'is_a' },
];

function snake(words: string): string {
  return words.trim().toLowerCase().replace(/^favou?rite/, 'favorite').replace(/\s+/g, '_').replace(/colour/, 'color');
}

function normalise(text: string): string {
  let out = text;
  for (const [re, to] of CONTRACTIONS) out = out.replace(re, to);
  return out;
}

function sentencesOf(text: string): string[] {
  return normalise(text)
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

function factsOf(sentence: string): ExtractedFact[] {
  for (const pattern of PATTERNS) {
    const m = pattern.re.exec(sentence);
    if (!m) continue;
    const relation = typeof pattern.relation === 'string' ? pattern.relation : pattern.relation(m);
    const raw = m[m.length - 1]!;
    const label = pattern.properName ? raw.trim() : phrase(raw);
    if (!label || /^(?:it|that|this|them|one|you|to)$/i.test(label)) return [];
    // "I'd like to know…", "I want to ask…": requests, not facts about the user.
    if ((relation === 'wants' || relation === 'likes' || relation === 'prefers') && /^(?:to|know|ask|see|check|talk|get|find|understand)\b/i.test(raw.trim())) return [];
    return [{ subject: 'user', relation, object: { label, type: typeOfObject(label, relation) }, negated: pattern.negated ?? false }];
  }
  return [];
}

function properNouns(sentence: string): ExtractedEntity[] {
  const found: ExtractedEntity[] = [];
  const re = /\b((?!I\b)[A-Z][\p{L}\d'’-]*(?:\s+(?:(?!I\b)[A-Z][\p{L}\d'’-]*|\d+|of|de|von))*)/gu;
  for (const m of sentence.matchAll(re)) {
    let label = m[1]!.replace(/\s+(?:of|de|von)$/, '');
    const before = sentence.slice(0, m.index);
    const words = label.split(/\s+/);
    if (before.trim() === '' && COMMON_START.has(words[0]!.toLowerCase())) {
      words.shift();
      label = words.join(' ');
      if (!label || !/^[A-Z]/.test(label)) continue;
    }
    if (COMMON_START.has(label.toLowerCase()) || label.length < 2) continue;
    let type: EntityType = 'concept';
    if (ORG_SUFFIX.test(label)) type = 'organization';
    else if (/\d|[a-z][A-Z]/.test(label)) type = 'product';
    else if (PERSON_CUE.test(before)) type = 'person';
    else if (PLACE_CUE.test(before)) type = 'place';
    found.push({ label, type });
  }
  return found;
}

/** Entities and facts of one user message. */
export function extractMemory(text: string): Extraction {
  const entities: ExtractedEntity[] = [];
  const facts: ExtractedFact[] = [];
  for (const sentence of sentencesOf(text.slice(0, 8000))) {
    // "My name is Dana and I live in Portland": one fact per clause.
    const sentenceFacts = sentence.split(/,?\s+and\s+(?=i\b|my\b)|;\s*/i).flatMap(factsOf);
    facts.push(...sentenceFacts);
    for (const f of sentenceFacts) entities.push(f.object);
    for (const m of sentence.matchAll(DATE)) entities.push({ label: m[0], type: 'date' });
    // Dates are taken whole: their digits and month names are not numbers or names of their own.
    const rest = sentence.replace(DATE, (d) => ' '.repeat(d.length));
    for (const m of rest.matchAll(NUMBER)) entities.push({ label: m[0].trim(), type: 'number' });
    entities.push(...properNouns(rest));
  }
  // One entity per normalised label; the first (fact objects, most specific) type wins.
  const seen = new Set<string>();
  const unique = entities.filter((e) => {
    const key = normaliseLabel(e.label);
    if (!key || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return { entities: unique, facts };
}

/** How labels are compared: case, punctuation and spacing do not make two entities. */
export function normaliseLabel(label: string): string {
  return label.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase().replace(/[^\p{L}\p{N}@.#$€£%]+/gu, ' ').trim();
}

/** The last word of a noun phrase: "express shipping" and "standard shipping" share "shipping". */
export function headNoun(label: string): string {
  const words = normaliseLabel(label).split(' ');
  return words[words.length - 1] ?? '';
}
