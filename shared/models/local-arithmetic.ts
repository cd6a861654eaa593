import { analyze } from '../search/analyzer';
import type { Passage, ToolSpec } from './types';

/**
 * The built-in engine's arithmetic: a question that computes with numbers it gives ("what is
 * (12.5 + 7) * 3", "17% of 2,340", "the average of 4, 8 and 15") becomes a JavaScript expression
 * for the agent's code tool, so the answer is computed, not guessed. Words for operations are read
 * as their signs first; what is left must be only numbers, signs and parentheses, a minus or a
 * division written with spaces around it.
 */
const WORD_OPERATORS: Array<[RegExp, string]> = [
  [/\bto the power of\b/gi, ' ** '],
  [/\b(?:multiplied by|times)\b/gi, ' * '],
  [/\b(?:divided by|over)\b/gi, ' / '],
  [/\bplus\b/gi, ' + '],
  [/\bminus\b/gi, ' - '],
  [/[×x](?=\s*[\d(])/g, ' * '],
  [/÷/g, ' / '],
  [/\^/g, ' ** '],
];
const NUMBER = /\d+(?:,\d{3})*(?:\.\d+)?|\.\d+/g;
const plain = (n: string) => n.replace(/,/g, '');

/** A code tool: a `source` parameter the model writes JavaScript in. */
export function codeToolOf(tools: ToolSpec[]): ToolSpec | undefined {
  return tools.find((t) => {
    const source = (t.parameters.properties as Record<string, { type?: string; description?: string }> | undefined)?.source;
    return source?.type === 'string' && /javascript/i.test(`${source.description ?? ''} ${t.description}`);
  });
}

/** The JavaScript that computes what the message asks, or undefined when it asks no arithmetic. */
export function arithmeticOf(message: string): string | undefined {
  // "17% of 2,340", "17 percent of 2340"
  const percent = /(\d+(?:\.\d+)?)\s*(?:%|percent)\s+of\s+(\d+(?:,\d{3})*(?:\.\d+)?)/i.exec(message);
  if (percent) return `${percent[1]} / 100 * ${plain(percent[2]!)}`;
  // "the sum / total / average / mean of 4, 8 and 15"
  const listed = /\b(sum|total|average|mean|product)\s+of\s+([\d.,\s]+(?:(?:and|,)\s*[\d.,]+)*)/i.exec(message);
  if (listed) {
    const numbers = (listed[2]!.match(/\d+(?:\.\d+)?/g) ?? []).map(plain);
    if (numbers.length >= 2) {
      const list = `[${numbers.join(', ')}]`;
      const kind = listed[1]!.toLowerCase();
      if (kind === 'product') return `${list}.reduce((a, b) => a * b, 1)`;
      return kind === 'average' || kind === 'mean' ? `${list}.reduce((a, b) => a + b, 0) / ${numbers.length}` : `${list}.reduce((a, b) => a + b, 0)`;
    }
  }
  // An expression written out: the longest run of numbers, signs and parentheses with an operator between numbers.
  // A hyphen or slash between digits with no space around it joins them (555-0132, 2026-11-25,
  // 11/25): it is not taken for an operator.
  let text = message.replace(/(\d)[-/](?=\d)/g, '$1#');
  for (const [pattern, sign] of WORD_OPERATORS) text = text.replace(pattern, sign);
  const runs = text.match(/[\d.,()+\-*/\s]+/g) ?? [];
  const expression = runs
    .map((run) => run.trim().replace(/[,.]$/, ''))
    .filter((run) => /\d\s*(?:\*\*|[+\-*/])\s*[\d(]/.test(run) && balanced(run))
    .sort((a, b) => b.length - a.length)[0];
  return expression ? expression.replace(NUMBER, plain).replace(/\s+/g, ' ') : undefined;
}

function balanced(text: string): boolean {
  let depth = 0;
  for (const c of text) {
    depth += c === '(' ? 1 : c === ')' ? -1 : 0;
    if (depth < 0) return false;
  }
  return depth === 0;
}

const AGGREGATE = /\b(sum|total|average|mean|combined|altogether)\b/i;
/** An amount of money: a currency sign or code beside the number. */
const AMOUNT = /[$€£]\s?(\d+(?:,\d{3})*(?:\.\d+)?)|(\d+(?:,\d{3})*(?:\.\d+)?)\s?(?:EUR|USD|GBP|€|\$|£|dollars?|euros?|pounds?)\b/gi;

/**
 * The JavaScript that totals (or averages) the amounts of money the grounding gives for what the
 * message asks about ("what do the three refunds come to in total?"): the amounts in the passages'
 * sentences that name a word of the question. Only amounts with a currency, so dates, counts and
 * ids are never added up; undefined unless at least two are found.
 */
export function groundedArithmeticOf(message: string, passages: Passage[]): string | undefined {
  const kind = AGGREGATE.exec(message)?.[1]?.toLowerCase();
  if (!kind) return undefined;
  const asked = new Set(analyze(message.replace(AGGREGATE, ' ')));
  if (asked.size === 0) return undefined;
  const amounts: string[] = [];
  for (const passage of passages) {
    for (const sentence of passage.text.split(/(?<=[.!?;\n])\s+/)) {
      if (!analyze(sentence).some((term) => asked.has(term))) continue;
      for (const m of sentence.matchAll(AMOUNT)) amounts.push(plain(m[1] ?? m[2]!));
    }
  }
  if (amounts.length < 2) return undefined;
  const sum = `[${amounts.join(', ')}].reduce((a, b) => a + b, 0)`;
  return kind === 'average' || kind === 'mean' ? `${sum} / ${amounts.length}` : sum;
}
