import type { ToolSpec } from './types';

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
  return expression ? expression.replace(NUMBER, plain) : undefined;
}

function balanced(text: string): boolean {
  let depth = 0;
  for (const c of text) {
    depth += c === '(' ? 1 : c === ')' ? -1 : 0;
    if (depth < 0) return false;
  }
  return depth === 0;
}
