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

/**
 * Sentences of a paragraph: cut after . ! ? followed by white space and a sentence start (not a
 * lower-case word), never inside `inline code` (so `fastify.listen()` stays whole) or after e.g.
 */
export function sentencesOf(paragraph: string): string[] {
  const out: string[] = [];
  let start = 0;
  let inCode = false;
  for (let i = 0; i < paragraph.length; i++) {
    const c = paragraph[i]!;
    if (c === '`') inCode = !inCode;
    if (inCode || (c !== '.' && c !== '!' && c !== '?')) continue;
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
  const asked = howTo && [...words].some((t) => !HOW_TO_FILLER.has(t)) ? new Set([...words].filter((t) => !HOW_TO_FILLER.has(t))) : words;
  const headingTerms = passages.map((p) => new Set(analyze(p.title)));
  const sentences = units.flat().filter((u) => u.kind === 'sentence');
  if (asked.size === 0 || sentences.length === 0) return { ranked: [], units, best: 0, named: 0, asked: asked.size };
  const termsOf = sentences.map((u) => new Set(analyze(u.text)));
  const df = new Map<string, number>();
  termsOf.forEach((terms, i) => {
    for (const t of asked) if (terms.has(t) || headingTerms[sentences[i]!.passage]!.has(t)) df.set(t, (df.get(t) ?? 0) + 1);
  });
  // A question word no passage has (a general word, or a typo) weighs as little as one every
  // sentence has: it cannot tell passages apart.
  // A how-to names a task in several words, and the section that covers more of them is the one
  // that does it: its rare words weigh less than in a factoid, where one rare name decides.
  const idf = (t: string) => Math.log(1 + sentences.length / (df.get(t) ?? sentences.length));
  const weight = howTo ? (t: string) => Math.sqrt(idf(t)) : idf;
  const total = [...asked].reduce((s, t) => s + weight(t), 0);
  const ranked = sentences
    .map((unit, i) => {
      const terms = termsOf[i]!;
      let own = 0;
      let fromHeadings = 0;
      let named = 0;
      for (const t of asked) {
        if (terms.has(t)) own += weight(t);
        else if (headingTerms[unit.passage]!.has(t)) fromHeadings += weight(t);
        else continue;
        named++;
      }
      const coverage = (own + 0.7 * fromHeadings) / total;
      // A how-to is best answered from a section that shows how: one with a code example.
      const shows = howTo ? (units[unit.passage]!.some((u) => u.kind === 'code') ? 0.05 : 0) : 0;
      // Headings make a sentence's case stronger, but are no evidence without a word of its own.
      const score = own > 0 ? coverage + shows - terms.size * 0.002 - unit.passage * 0.01 - unit.position * 1e-5 : 0;
      return { ...unit, score, terms, named };
    })
    .filter((u) => u.score > 0)
    .sort((a, b) => b.score - a.score);
  return { ranked, units, best: ranked[0]?.score ?? 0, named: ranked[0]?.named ?? 0, asked: asked.size };
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

/**
 * The reply from the evidence: best evidence first, each sentence cited [n]; a how-to adds the code
 * example of the best sentence's section; a section about an API names it first.
 */
export function composeAnswer(question: string, passages: Passage[], evidence: Evidence): string {
  const [best] = evidence.ranked;
  if (!best) return '';
  const kind = questionKind(question);
  // How-to: stay in the best section (its explanation and its example); otherwise the best sentences anywhere.
  const pool = kind === 'how-to' ? evidence.ranked.filter((u) => u.passage === best.passage) : evidence.ranked;
  const chosen: Scored[] = [best];
  let words = best.text.split(/\s+/).length;
  for (const unit of pool.slice(1)) {
    if (chosen.length >= 3 || unit.score < best.score * 0.6) break;
    const size = unit.text.split(/\s+/).length;
    if (words + size > MAX_WORDS) continue;
    // A sentence that adds none of the question's terms beyond what is chosen repeats it.
    if (chosen.some((c) => c.text === unit.text)) continue;
    chosen.push(unit);
    words += size;
  }
  // In a how-to, the chosen sentences read in the document's order.
  if (kind === 'how-to') chosen.sort((a, b) => a.position - b.position);
  const name = apiName(passages[best.passage]!.title);
  const lead = chosen.map((u) => `${u.text} [${u.passage + 1}]`).join(' ');
  const named = name && !lead.includes(name) ? `\`${name}\`: ${lead}` : lead;
  if (kind !== 'how-to') return named;
  const code = codeFor(passages, evidence, best, new Set(analyze(question)));
  return code ? `${named}\n\n${quoteCode(code.text)}` : named;
}
