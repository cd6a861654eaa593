import { analyze } from '../search/analyzer';
import type { Passage } from './types';

/**
 * How the built-in engine answers from passages: it reads each passage as documentation — prose
 * sentences, whole code blocks, list items and table rows as units, under the headings the passage
 * sits in — ranks the sentences by how much of the question they (and their headings) cover, and
 * composes a short reply by the kind of question: a how-to gets the explanation and the code example
 * that shows it, anything else the best sentences, each cited [n]. It never invents: every word of a
 * reply is from a passage, or says what it could not find.
 */

/** Words of a how-to question that name no subject: "How do I use…", "…the way to get…". */
const HOW_TO_FILLER = new Set(analyze('use using make get want need way able possible'));

/** A piece of a passage a reply can quote. */
export interface Unit {
  kind: 'sentence' | 'code';
  text: string;
  /** 0-based passage, and the unit's position in it. */
  passage: number;
  position: number;
}

const ABBREVIATIONS = /\b(?:e\.g|i\.e|etc|vs|cf|approx|incl|no|fig|ca|dr|mr|mrs|ms|st)\.$/i;

const BACKTICK = '`'.charCodeAt(0);

/**
 * Sentences of a paragraph: cut after . ! ? followed by white space and a sentence start (not a
 * lower-case word), never inside `inline code` (so `fastify.listen()` stays whole) or after e.g.
 */
export function sentencesOf(paragraph: string): string[] {
  const out: string[] = [];
  let start = 0;
  let inCode = false;
  // From one mark to the next (the regex engine skips the text between): this runs over every
  // passage of every grounded turn.
  const marks = /[.!?`]/g;
  while (marks.test(paragraph)) {
    const i = marks.lastIndex - 1;
    const backtick = paragraph.charCodeAt(i) === BACKTICK;
    if (backtick) inCode = !inCode;
    if (inCode || backtick) continue;
    const rest = paragraph.slice(i + 1);
    const gap = /^["')\]]*\s+(\S)/.exec(rest);
    if (!gap || /\p{Ll}/u.test(gap[1]!)) continue;
    const sentence = paragraph.slice(start, i + 1).trim();
    if (ABBREVIATIONS.test(sentence)) continue;
    out.push(sentence);
    start = i + 1;
  }
  const last = paragraph.slice(start).trim();
  if (last) out.push(last);
  return out.filter((s) => /[\p{L}\p{N}]/u.test(s));
}

const isTableRow = (line: string) => /^\s*\|.*\|\s*$/.test(line);
const isTableRule = (line: string) => /^\s*\|?[\s:|-]+\|?\s*$/.test(line) && line.includes('-');

/** Paragraphs of prose and whole code blocks, in order; code cut off by the chunk's start or end is dropped. */
function blocksOf(text: string): Array<{ code: boolean; text: string }> {
  const lines = text.split('\n');
  const blocks: Array<{ code: boolean; text: string }> = [];
  // Opening fences name a language (extract.ts writes them so): a bare fence first is the end of a
  // block the chunk starts inside, and what comes before it is code cut off.
  const firstFence = lines.findIndex((l) => /^\s*```/.test(l));
  let i = firstFence >= 0 && /^\s*```\s*$/.test(lines[firstFence]!) ? firstFence + 1 : 0;
  let prose: string[] = [];
  const endProse = () => {
    for (const paragraph of prose.join('\n').split(/\n[ \t]*\n/)) if (paragraph.trim()) blocks.push({ code: false, text: paragraph.trim() });
    prose = [];
  };
  for (; i < lines.length; i++) {
    if (!/^\s*```/.test(lines[i]!)) {
      prose.push(lines[i]!);
      continue;
    }
    endProse();
    const start = i;
    for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]!); i++);
    if (i < lines.length) blocks.push({ code: true, text: lines.slice(start, i + 1).join('\n') });
  }
  endProse();
  return blocks;
}

/** A passage as units: fenced code whole, table rows one by one, prose by sentence. */
export function unitsOf(text: string, passage: number): Unit[] {
  const units: Unit[] = [];
  const add = (kind: Unit['kind'], unit: string) => units.push({ kind, text: unit, passage, position: units.length });
  for (const block of blocksOf(text)) {
    if (block.code) {
      add('code', block.text);
      continue;
    }
    const lines = block.text.split('\n');
    const rows = lines.filter(isTableRow);
    if (rows.length > 0 && rows.length >= lines.length / 2) {
      // A table: its whole rows (one cut by the chunk's edge is not whole), each read with the
      // header's names ("Option: `compress`; Default: `false`") when the header is here (the row
      // above the rule); the header is not a unit itself.
      const cellsOf = (row: string) => row.split('|').slice(1, -1).map((c) => c.trim());
      const rule = rows.findIndex(isTableRule);
      const header = rule > 0 ? cellsOf(rows[rule - 1]!) : [];
      const body = rows.filter((r, i) => !isTableRule(r) && i !== rule - 1).map(cellsOf);
      for (const cells of body) {
        const named = cells.map((cell, i) => (cell && header[i] ? `${header[i]}: ${cell}` : cell)).filter(Boolean);
        if (named.length > 0) add('sentence', `${named.join('; ')}.`.replace(/\.\.$/, '.'));
      }
      continue;
    }
    for (const sentence of sentencesOf(block.text.replace(/\s+/g, ' '))) add('sentence', sentence);
  }
  return units;
}

/** The kind of question, by its opening words. */
export type QuestionKind = 'how-to' | 'definition' | 'yes-no' | 'other';

export function questionKind(question: string): QuestionKind {
  const q = question.trim().toLowerCase();
  if (/^(how (do|can|should|would|could|to|does one)\b|what('s| is) the (best |right |recommended )?way to\b|is there a way to\b|(show|tell) me how\b|i (want|need) to\b)/.test(q)) return 'how-to';
  if (/^(what|who) (is|are|was|were)\b|^define\b|^what does .* mean\b/.test(q)) return 'definition';
  if (/^(is|are|can|does|do|should|will|was|were|has|have)\b/.test(q)) return 'yes-no';
  return 'other';
}

/**
 * The name a section documents, when its heading is an API name (`bodyLimit`, `.header(key, value)`,
 * `setErrorHandler`): a method heading that starts with a dot takes its object from the heading
 * above (`Reply` › `.header(…)` → `reply.header(…)`).
 */
export function apiName(title: string): string | undefined {
  const parts = title.split(' › ').map((p) => p.trim());
  const heading = parts[parts.length - 1] ?? '';
  if (!/^\.?[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*(?:\(.*\))?$/.test(heading)) return undefined;
  // Words as code writes them: camelCase, a dot, a call, or all lower case (an option's name); a capitalised word is prose.
  const identifier = /[a-z][A-Z]|[._$(]|^[a-z][a-z0-9]*$/.test(heading) ? heading : undefined;
  if (!identifier) return undefined;
  const parent = parts[parts.length - 2];
  if (identifier.startsWith('.') && parent && /^[A-Z][a-z]+$/.test(parent)) return `${parent.toLowerCase()}${identifier}`;
  return identifier;
}

interface Scored extends Unit {
  score: number;
  terms: Set<string>;
  /** How many of the question's distinct terms the unit and its headings name. */
  named: number;
  /** Which of them. */
  covers: Set<string>;
}

/** What the engine found for a question in the passages: ranked sentences and every unit. */
export interface Evidence {
  ranked: Scored[];
  units: Unit[][];
  /** Of the best unit: its score (mostly the share of the question's weight it and its headings cover). */
  best: number;
  /** Of the best unit: how many of the question's distinct terms it and its headings name, and of how many. */
  named: number;
  asked: number;
  /** The question's terms the evidence was weighed on, with their weights. */
  weights: Map<string, number>;
}

/** How much a sentence loses when its section's title names what the question rules out. */
const RULED_OUT = 0.2;

/**
 * The terms a question rules out: those of the words after "without" or "instead of" (up to the
 * clause's end), except terms the question also asks for elsewhere.
 */
export function ruledOut(question: string, asked: Set<string>): Set<string> {
  const out = new Set<string>();
  const elsewhere = new Set(analyze(question.replace(/\b(?:without|instead of|rather than|other than)\s+[^,.;?!]*/gi, ' ')));
  for (const m of question.matchAll(/\b(?:without|instead of|rather than|other than)\s+([^,.;?!]*)/gi)) {
    for (const t of analyze(m[1]!.split(/\s+/).slice(0, 4).join(' '))) if (asked.has(t) && !elsewhere.has(t)) out.add(t);
  }
  return out;
}

/** What kind of value answers a factoid question, by its wording. */
export type AnswerKind = 'place' | 'time' | 'number' | 'person';

export function expectedAnswer(question: string): AnswerKind | undefined {
  const q = question.trim().toLowerCase();
  if (/^where\b|\bwhere (was|is|were|are|did|does|do)\b|\b(in|from) (which|what) (city|town|village|country|place|state|region|county|province)\b/.test(q)) return 'place';
  if (/^when\b|\b(what|which) (year|date|century|decade|day|month)\b|\bwhen (was|is|did|were|does)\b/.test(q)) return 'time';
  if (/\bhow (many|much|long|old|tall|high|deep|far|big|large|wide)\b/.test(q)) return 'number';
  if (/^(who|whom)\b/.test(q)) return 'person';
  return undefined;
}

/** How much a sentence that holds the kind of value asked for gains: enough to pass one that only repeats the question. */
const ANSWER_FIT = 0.12;
/** How much a sentence about a name the question asks about (in its passage's title or its own words) gains. */
const NAMED_FIT = 0.08;
const MONTHS = /\b(January|February|March|April|May|June|July|August|September|October|November|December)\b/;

/** Whether a sentence holds a value of the kind asked for that the question itself does not name. */
export function bearsAnswer(sentence: string, kind: AnswerKind, question: string): boolean {
  const unasked = (value: string) => !question.toLowerCase().includes(value.toLowerCase());
  const any = (pattern: RegExp, group = 0) => [...sentence.matchAll(pattern)].some((m) => unasked(m[group]!));
  switch (kind) {
    case 'place':
      return any(/\b(?:in|at|from|near|of)\s+(?:the\s+)?((?:[A-Z][\p{L}'’-]+\s?)+)/gu, 1);
    case 'time':
      return any(/\b(?:1\d{3}|20\d{2})s?\b/g) || MONTHS.test(sentence);
    case 'number':
      return any(/\d[\d,.]*|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|thousand|million|billion|dozen)\b/gi);
    case 'person':
      return any(/\b[A-Z][\p{L}'’-]+(?:\s+[A-Z][\p{L}'’-]+)+/gu);
  }
}

/**
 * Relations said in other words (a question about a wife is answered by who was married to whom;
 * about a birthplace by where someone was born), as the analyzer's terms.
 */
const RELATED = new Map<string, string[]>(
  (
    [
      ['wife', 'married husband spouse'],
      ['husband', 'married wife spouse'],
      ['spouse', 'married wife husband'],
      ['birthplace', 'born'],
      ['author', 'wrote written writer'],
      ['portrayed', 'played starring starred'],
      ['death', 'died'],
      ['died', 'death'],
    ] as const
  ).map(([word, related]) => [analyze(word)[0]!, analyze(related)]),
);

const VARIANT_ENDINGS = new Set(['er', 'or', 'ers', 'ors', 'ion', 'ions', 'ment', 'ments']);

/**
 * Adds to a sentence's terms the question's terms it names in another form: the analyzer leaves
 * "founder" and "founded" (found), "director" and "directed" (direct) apart, but a question about
 * the founder is answered by who founded it. A variant is the same stem with the ending of a doer
 * or an act (not "foundry" for "found"); a relation above counts too.
 */
function withVariants(terms: Set<string>, asked: Set<string>): Set<string> {
  for (const t of asked) {
    if (!terms.has(t) && RELATED.get(t)?.some((r) => terms.has(r))) terms.add(t);
    if (terms.has(t) || t.length < 4) continue;
    for (const u of terms) {
      const [short, long] = u.length < t.length ? [u, t] : [t, u];
      if (short.length >= 4 && long.startsWith(short) && VARIANT_ENDINGS.has(long.slice(short.length))) {
        terms.add(t);
        break;
      }
    }
  }
  return terms;
}

/**
 * Ranks the passages' sentences: the idf-weighted share of the question's terms a sentence covers —
 * its own words fully, its section's headings at a discount — a little preference for concise
 * sentences and for passages search ranked higher.
 */
export function gatherEvidence(question: string, passages: Passage[], words: Set<string> = new Set(analyze(question))): Evidence {
  const units = passages.map((p, i) => unitsOf(p.text, i));
  const howTo = questionKind(question) === 'how-to';
  // "How do I use a proxy" asks about the proxy: a how-to's generic verbs are no evidence.
  const meant = howTo && [...words].some((t) => !HOW_TO_FILLER.has(t)) ? new Set([...words].filter((t) => !HOW_TO_FILLER.has(t))) : words;
  // "…without starting the server": what the question rules out is no evidence for it, and a section titled for it is the wrong one.
  const excluded = ruledOut(question, meant);
  const asked = excluded.size > 0 && [...meant].some((t) => !excluded.has(t)) ? new Set([...meant].filter((t) => !excluded.has(t))) : meant;
  const headingTerms = passages.map((p) => new Set(analyze(p.title)));
  const titledAgainst = passages.map((_, i) => [...excluded].some((t) => headingTerms[i]!.has(t)));
  const sentences = units.flat().filter((u) => u.kind === 'sentence');
  if (asked.size === 0 || sentences.length === 0) return { ranked: [], units, best: 0, named: 0, asked: asked.size, weights: new Map() };
  const termsOf = sentences.map((u) => withVariants(new Set(analyze(u.text)), asked));
  for (const heading of headingTerms) withVariants(heading, asked);
  const df = new Map<string, number>();
  termsOf.forEach((terms, i) => {
    for (const t of asked) if (terms.has(t) || headingTerms[sentences[i]!.passage]!.has(t)) df.set(t, (df.get(t) ?? 0) + 1);
  });
  // A question word no passage has (a general word, or a typo) weighs as little as one every
  // sentence has: it cannot tell passages apart.
  // A how-to names a task in several words, and the section that covers more of them is the one
  // that does it: its rare words weigh less than in a factoid, where one rare name decides.
  const idf = (t: string) => Math.log(1 + sentences.length / (df.get(t) ?? sentences.length));
  const weights = new Map([...asked].map((t) => [t, howTo ? Math.sqrt(idf(t)) : idf(t)]));
  const total = [...weights.values()].reduce((s, w) => s + w, 0);
  const wants = howTo ? undefined : expectedAnswer(question);
  // The names a factoid question asks about ("…the director of Harbour of Salt"): the passages about them come first.
  const askedNames = howTo ? [] : namesIn(question).filter((name) => [...name].every((t) => asked.has(t)));
  const aboutAsked = passages.map((p, i) => askedNames.length > 0 && askedNames.some((name) => [...name].every((t) => headingTerms[i]!.has(t))));
  // A how-to is best answered from a section that shows how: one with a code example.
  const shows = units.map((passage) => (howTo && passage.some((u) => u.kind === 'code') ? 0.05 : 0));
  // Only sentences with a word of the question score (headings make a sentence's case stronger,
  // but are no evidence without a word of its own): only those are worked out and kept.
  const ranked: Scored[] = [];
  sentences.forEach((unit, i) => {
    const terms = termsOf[i]!;
    let own = 0;
    let fromHeadings = 0;
    const covers = new Set<string>();
    for (const [t, w] of weights) {
      if (terms.has(t)) own += w;
      else if (headingTerms[unit.passage]!.has(t)) fromHeadings += w;
      else continue;
      covers.add(t);
    }
    if (own === 0) return;
    const coverage = (own + 0.7 * fromHeadings) / total;
    // "Where…" is answered by a sentence that names a place the question does not (and so on for when, how many, who).
    const fits = wants && bearsAnswer(unit.text, wants, question) ? ANSWER_FIT : 0;
    const about = aboutAsked[unit.passage] || (askedNames.length > 0 && askedNames.some((name) => [...name].every((t) => terms.has(t)))) ? NAMED_FIT : 0;
    const against = titledAgainst[unit.passage] ? RULED_OUT : 0;
    const score = coverage + shows[unit.passage]! + fits + about - against - terms.size * 0.002 - unit.passage * 0.01 - unit.position * 1e-5;
    if (score > 0) ranked.push({ kind: unit.kind, text: unit.text, passage: unit.passage, position: unit.position, score, terms, named: covers.size, covers });
  });
  // Stable: equal scores keep the passages' order.
  ranked.sort((a, b) => b.score - a.score);
  return { ranked, units, best: ranked[0]?.score ?? 0, named: ranked[0]?.named ?? 0, asked: asked.size, weights };
}

const MAX_CODE_LINES = 15;
const MAX_WORDS = 120;

/** A code block as a reply quotes it: whole, or its first lines with a note. */
function quoteCode(block: string): string {
  const lines = block.split('\n');
  if (lines.length <= MAX_CODE_LINES + 2) return block;
  return [...lines.slice(0, MAX_CODE_LINES + 1), '// …', '```'].join('\n');
}

/**
 * The code block that shows a sentence: the first after it in its passage, else the one before;
 * a section without one borrows the first example of a passage from the same page, in search's
 * order, whose section headings name a word of the question.
 */
function codeFor(passages: Passage[], evidence: Evidence, sentence: Scored, asked: Set<string>): Unit | undefined {
  const code = (passage: number) => evidence.units[passage]!.filter((u) => u.kind === 'code');
  const own = code(sentence.passage);
  const mine = own.find((u) => u.position > sentence.position) ?? own.reverse()[0];
  if (mine) return mine;
  const page = pageOf(passages[sentence.passage]!.title);
  for (const [i, passage] of passages.entries()) {
    if (i === sentence.passage || pageOf(passage.title) !== page || code(i).length === 0) continue;
    // The neighbour's own headings (not the page's title) must name a word of the question.
    const headings = passage.title.split(' › ').slice(1).join(' ');
    if (analyze(headings).some((t) => asked.has(t))) return code(i)[0];
  }
  return undefined;
}

/** The page a passage is from: its title's first part (the document's title or path). */
const pageOf = (title: string) => title.split(' › ')[0];

/** Names a sentence mentions (capitalised runs: "Mirela Vant", "University of Lindholm"), as their terms. */
function namesIn(sentence: string): Array<Set<string>> {
  const names: Array<Set<string>> = [];
  for (const match of sentence.matchAll(/\b[A-Z][\p{L}'’-]*(?:\s+(?:(?:of|the|for|de|del|da|van|von|le|la)\s+)*[A-Z][\p{L}'’-]*)*/gu)) {
    // A capitalised word alone at the start of the sentence is only the sentence's first word.
    if (match.index === 0 && !/\s/.test(match[0])) continue;
    const terms = new Set(analyze(match[0]));
    if (terms.size > 0) names.push(terms);
  }
  return names;
}

/** The name a sentence opens with, as terms ("The Coastal Open is…" → coastal, open), or none. */
function openingName(sentence: string): Set<string> {
  const opening = /^[A-Z][\p{L}'’-]*(?:\s+(?:(?:of|the|for|de|del|da|van|von|le|la)\s+)*[A-Z][\p{L}'’-]*)*/u.exec(sentence);
  return new Set(opening ? analyze(opening[0]) : []);
}

const MAX_SENTENCES = 3;

/**
 * The sentences a factoid answer quotes: the best, then others that add a term of the question the
 * chosen ones do not cover (or come from a passage already quoted) — so a passage is cited only for
 * what it adds. When the question still has uncovered terms (a bridge: "where was the director of
 * X born?"), the names the chosen sentences mention (X's director) lead to the passage about them,
 * and its sentence that covers the rest is added: the second hop.
 */
function factSentences(question: string, passages: Passage[], evidence: Evidence, best: Scored): Scored[] {
  const chosen: Scored[] = [best];
  const covered = new Set(best.covers);
  const asked = new Set(evidence.weights.keys());
  const askedNames = namesIn(question).filter((name) => [...name].every((t) => asked.has(t)));
  const titleTerms = passages.map((p) => new Set(analyze(p.title)));
  // A sentence about a name: the name is in it or in its passage's title.
  const mentions = (unit: Scored, name: Set<string>) => [...name].every((t) => unit.terms.has(t) || titleTerms[unit.passage]!.has(t));
  // What a passage is about: its title, and the name its first sentence opens with ("Tomas Brekke (1958 – 2019) was…").
  const aboutTitle = passages.map((p) => new Set(analyze(aboutOf(p.title))));
  const subjects = passages.map((_, i) => [aboutTitle[i]!, openingName(evidence.units[i]!.find((u) => u.kind === 'sentence')?.text ?? '')].filter((t) => t.size > 0));
  // A passage is about a name when one of its subjects is the name or its core ("Peter Lowe" for "Admiral Peter Lowe") or holds it whole.
  const about = (passage: number, name: Set<string>) => subjects[passage]!.some((subject) => [...subject].every((t) => name.has(t)) || [...name].every((t) => subject.has(t)));
  let words = best.text.split(/\s+/).length;
  const wants = expectedAnswer(question);
  const answered = () => wants !== undefined && chosen.some((c) => bearsAnswer(c.text, wants, question));
  const take = (unit: Scored) => {
    chosen.push(unit);
    for (const t of unit.covers) covered.add(t);
    words += unit.text.split(/\s+/).length;
  };
  for (const unit of evidence.ranked.slice(1)) {
    if (chosen.length >= MAX_SENTENCES || unit.score < best.score * 0.6) break;
    if (words + unit.text.split(/\s+/).length > MAX_WORDS || chosen.some((c) => c.text === unit.text)) continue;
    const adds = [...unit.covers].some((t) => !covered.has(t));
    // Sections of the page already quoted read as one text (a README's sections); another document must earn its citation.
    const quoted = chosen.some((c) => c.passage === unit.passage || pageOf(passages[c.passage]!.title) === pageOf(passages[unit.passage]!.title));
    // A sentence from another passage that only repeats what is chosen is cited for nothing, unless it holds the kind of answer asked for and nothing chosen does.
    if (!adds && !quoted && !(wants && !answered() && bearsAnswer(unit.text, wants, question))) continue;
    // When the question names what it asks about, another passage is quoted only about one of those (the hop finds what they lead to).
    if (!quoted && askedNames.length > 0 && !askedNames.some((name) => mentions(unit, name))) continue;
    take(unit);
  }
  // A comparison ("A or B", "A and B") is answered by a sentence about each: one about a name nothing chosen is about joins.
  if (askedNames.length >= 2) {
    for (const name of askedNames) {
      if (chosen.some((c) => mentions(c, name))) continue;
      const other = evidence.ranked.find((u) => mentions(u, name) && !chosen.includes(u));
      if (other && words + other.text.split(/\s+/).length <= MAX_WORDS) {
        if (chosen.length >= MAX_SENTENCES) chosen.pop();
        take(other);
      }
    }
  }
  // A unit's terms (with the question's variants), read once however many hops look at it.
  const termsOfUnit = new Map<Unit, Set<string>>();
  const termsOf = (unit: Unit) => termsOfUnit.get(unit) ?? termsOfUnit.set(unit, withVariants(new Set(analyze(unit.text)), asked)).get(unit)!;
  // A unit quoted for the hop (the sentence that leads there, or the passage's first): it covers nothing itself.
  const asScored = (unit: Unit): Scored => ({ ...unit, score: 0, terms: termsOf(unit), named: 0, covers: new Set() });
  const weightOf = (terms: Iterable<string>) => [...terms].reduce((sum, t) => sum + (covered.has(t) ? 0 : (evidence.weights.get(t) ?? 0)), 0);
  // Up to two hops: each must cover what is still uncovered (the second the rest of it: "…played on clay courts").
  for (let hops = 0; hops < 2; hops++) {
    const remaining = weightOf(evidence.weights.keys());
    if (remaining <= 0 && (!wants || answered())) break;
    // The names that may lead on: those of the chosen sentences, then of the rest of their passages (with the sentence that names them).
    const isChosen = (u: Unit) => chosen.some((c) => c.passage === u.passage && c.position === u.position);
    const quoted = new Set(chosen.map((c) => c.passage));
    const leads = [...chosen, ...[...quoted].flatMap((p) => evidence.units[p]!.filter((u) => u.kind === 'sentence' && !isChosen(u)))].flatMap((unit) =>
      namesIn(unit.text)
        .filter((name) => [...name].some((t) => !asked.has(t)))
        .map((name) => ({ name, unit })),
    );
    // A new value of the kind asked for: one neither the question nor the chosen sentences name.
    const said = `${question} ${chosen.map((c) => c.text).join(' ')}`;
    let hop: { unit: Scored; gain: number; via: Unit } | undefined;
    for (const [passage, units] of evidence.units.entries()) {
      // Led there by a name the passage is about, or (in another document) one its sentence names ("…was married to Ewan MacColl").
      const leadTo = (terms: Set<string>) =>
        leads.find(
          ({ name, unit }) =>
            unit.passage !== passage &&
            ((about(passage, name) && !about(unit.passage, name)) || (pageOf(passages[passage]!.title) !== pageOf(passages[unit.passage]!.title) && [...name].every((t) => terms.has(t)))),
        );
      for (const unit of units) {
        if (unit.kind !== 'sentence' || isChosen(unit)) continue;
        const terms = termsOf(unit);
        const lead = leadTo(terms);
        if (!lead) continue;
        const covers = new Set([...asked].filter((t) => terms.has(t) || aboutTitle[passage]!.has(t)));
        const fits = wants !== undefined && bearsAnswer(unit.text, wants, said);
        // A lead from a sentence not yet chosen costs a sentence more: it must be worth it.
        const gain = weightOf(covers) + (fits ? remaining * 0.5 + 0.01 : 0) - (isChosen(lead.unit) ? 0 : 0.001);
        if (gain > 0 && (!hop || gain > hop.gain)) hop = { unit: { ...unit, score: 0, terms, named: covers.size, covers }, gain, via: lead.unit };
      }
    }
    if (!hop || (hops > 0 && chosen.length >= MAX_SENTENCES + 1)) break;
    const { unit: reachedUnit, via } = hop;
    if (!isChosen(via)) {
      // The sentence that names where the answer is ("He was born in Castelmoro") goes before it, in place of a filler if need be.
      if (chosen.length >= MAX_SENTENCES) chosen.pop();
      take(asScored(via));
    }
    if (chosen.length >= MAX_SENTENCES + 1) chosen.pop();
    // A passage reached through a name it only mentions is about someone else: its first sentence says who ("Peggy Seeger is an American folksinger").
    const opening = evidence.units[reachedUnit.passage]!.find((u) => u.kind === 'sentence');
    const mentionedOnly = subjects[reachedUnit.passage]!.length > 0 && !leads.some(({ name }) => about(reachedUnit.passage, name));
    if (mentionedOnly && opening && opening.position !== reachedUnit.position && !isChosen(opening) && chosen.length < MAX_SENTENCES) take(asScored(opening));
    take(reachedUnit);
  }
  return chosen;
}

/**
 * The share of a factoid question's weight the sentences of its answer cover together: a question
 * no one sentence answers enough (a bridge's two halves are in two passages) is answerable when
 * the hop finds the rest.
 */
export function jointCoverage(question: string, passages: Passage[], evidence: Evidence): number {
  const [best] = evidence.ranked;
  if (!best || questionKind(question) === 'how-to') return 0;
  const covered = new Set(factSentences(question, passages, evidence, best).flatMap((u) => [...u.covers]));
  const total = [...evidence.weights.values()].reduce((a, b) => a + b, 0);
  return total > 0 ? [...covered].reduce((sum, t) => sum + (evidence.weights.get(t) ?? 0), 0) / total : 0;
}

/** A quoted sentence that opens with a pronoun ("It was founded in 1887.") is labelled with what its passage is about. */
const PRONOUN_START = /^(it|its|he|his|she|her|they|their|this|these)\b/i;
const aboutOf = (title: string) => (title.split(' › ').pop() ?? title).replace(/\.(md|txt|html?)$/i, '').trim();

/**
 * The reply from the evidence: best evidence first, each sentence cited [n]; a how-to adds the code
 * example of the best sentence's section; a section about an API names it first.
 */
export function composeAnswer(question: string, passages: Passage[], evidence: Evidence): string {
  const [best] = evidence.ranked;
  if (!best) return '';
  const kind = questionKind(question);
  if (kind !== 'how-to') {
    const chosen = factSentences(question, passages, evidence, best);
    const lead = chosen
      .map((u, i) => {
        const label = PRONOUN_START.test(u.text) && chosen[i - 1]?.passage !== u.passage ? aboutOf(passages[u.passage]!.title) : '';
        return `${label ? `${label}: ` : ''}${u.text} [${u.passage + 1}]`;
      })
      .join(' ');
    const name = apiName(passages[best.passage]!.title);
    return name && !lead.includes(name) ? `\`${name}\`: ${lead}` : lead;
  }
  // How-to: stay in the best section (its explanation and its example), read in the document's order.
  const chosen: Scored[] = [best];
  let words = best.text.split(/\s+/).length;
  for (const unit of evidence.ranked.filter((u) => u.passage === best.passage).slice(1)) {
    if (chosen.length >= MAX_SENTENCES || unit.score < best.score * 0.6) break;
    const size = unit.text.split(/\s+/).length;
    if (words + size > MAX_WORDS || chosen.some((c) => c.text === unit.text)) continue;
    chosen.push(unit);
    words += size;
  }
  chosen.sort((a, b) => a.position - b.position);
  const name = apiName(passages[best.passage]!.title);
  const lead = chosen.map((u) => `${u.text} [${u.passage + 1}]`).join(' ');
  const named = name && !lead.includes(name) ? `\`${name}\`: ${lead}` : lead;
  const code = codeFor(passages, evidence, best, new Set(analyze(question)));
  return code ? `${named}\n\n${quoteCode(code.text)}` : named;
}
