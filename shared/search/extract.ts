import { parse as parseCsv } from 'csv-parse/sync';
import { Parser } from 'htmlparser2';
import { textOf } from '../json-objects';

/**
 * Turns a file's content into blocks of text with the heading path they sit under, keeping the
 * structure that chunking and title weighting rely on. One function per format.
 */
export interface Block {
  /** Headings above the block, outermost first. */
  headings: string[];
  text: string;
  /** Where the block sits in a paged document: cited with the passages made of it. */
  location?: Location;
}

/** A page of a PDF, a slide of a deck, a sheet of a workbook. */
export interface Location {
  page?: number;
  slide?: number;
  sheet?: string;
}

export interface Extracted {
  title?: string;
  blocks: Block[];
}

const paragraphs = (text: string) =>
  text
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter(Boolean);

/** Plain text: paragraphs; a short first line followed by a blank line is the title. */
export function extractText(content: string): Extracted {
  const parts = content.replace(/\r\n?/g, '\n').split(/\n\s*\n/);
  const first = parts[0]?.trim() ?? '';
  if (parts.length > 1 && first.length > 0 && first.length <= 200 && !first.includes('\n')) {
    return { title: first, blocks: paragraphs(parts.slice(1).join('\n\n')).map((text) => ({ headings: [], text })) };
  }
  return { blocks: paragraphs(content).map((text) => ({ headings: [], text })) };
}

/**
 * Markdown prose without its markup noise: HTML tags and comments (anchors such as `<a id=…>`),
 * images and badges, blockquote markers, emphasis; links keep their text (autolinks their address), inline code its backticks.
 */
function cleanMarkdownLine(line: string): string {
  return line
    .replace(/<!--.*?-->/g, '')
    // An autolink (<https://…>, <name@example.com>) is its address, not a tag.
    .replace(/<((?:https?:\/\/|mailto:)[^>\s]+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)>/g, '$1')
    .replace(/<\/?[A-Za-z][^>]*>/g, '')
    .replace(/^\s*(?:>\s?)+/, '')
    .replace(/!\[[^\]]*\]\([^)]*\)/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\[[^\]]*\]/g, '$1')
    .replace(/(\*{1,3}|_{2,3})(\S(?:.*?\S)?)\1/g, '$2');
}

const LIST_ITEM = /^\s*(?:[-*+]|\d+[.)])\s+/;

/**
 * Markdown: ATX and setext headings open sections; fenced code stays one block, fenced (so answers
 * can tell code from prose and quote it whole); each list item is a paragraph of its own; front
 * matter, HTML comments and markup noise are dropped.
 */
export function extractMarkdown(content: string): Extracted {
  const lines = content
    .replace(/\r\n?/g, '\n')
    .replace(/^---\n[\s\S]*?\n---\n/, '')
    .replace(/<!--[\s\S]*?-->/g, '')
    .split('\n');
  const blocks: Block[] = [];
  const stack: Array<{ level: number; text: string }> = [];
  let buffer: string[] = [];
  let fence: string | undefined;
  let language = 'text';
  let title: string | undefined;
  const headings = () => stack.map((h) => h.text);
  const flush = () => {
    for (const text of paragraphs(buffer.join('\n'))) blocks.push({ headings: headings(), text });
    buffer = [];
  };
  const heading = (level: number, text: string) => {
    flush();
    const clean = cleanMarkdownLine(text).replace(/[*_`]/g, '').trim();
    while (stack.length > 0 && stack[stack.length - 1]!.level >= level) stack.pop();
    stack.push({ level, text: clean });
    if (level === 1 && title === undefined) title = clean;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fenceMatch = /^\s*(?:>\s?)*(```|~~~)\s*([\w+#.-]*)/.exec(line);
    if (fenceMatch) {
      if (fence === undefined) {
        flush();
        fence = fenceMatch[1];
        language = fenceMatch[2] || 'text';
      } else if (fenceMatch[1] === fence) {
        // The opening fence always names a language, so a bare fence is always a block's end (even in a chunk that starts inside one).
        const code = buffer.join('\n').replace(/^\n+|\s+$/g, '');
        if (code) blocks.push({ headings: headings(), text: `\`\`\`${language}\n${code}\n\`\`\`` });
        buffer = [];
        fence = undefined;
      }
      continue;
    }
    if (fence !== undefined) {
      buffer.push(line.replace(/^\s*(?:>\s?)+/, ''));
      continue;
    }
    const atx = /^\s*(?:[-*+]\s+)?(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (atx) {
      heading(atx[1]!.length, atx[2]!);
      continue;
    }
    const next = lines[i + 1];
    if (next !== undefined && line.trim() && /^(=+|-+)\s*$/.test(next) && buffer.every((l) => !l.trim())) {
      heading(next.trim().startsWith('=') ? 1 : 2, line);
      i++;
      continue;
    }
    // A table stays one block, a row a line (rows are units); the rule under the header stays too,
    // so a reader can tell the header from a row even in a chunk that starts mid-table.
    if (/^\s*\|.*\|\s*$/.test(line)) {
      flush();
      const rows: string[] = [];
      for (; i < lines.length && /^\s*\|.*\|\s*$/.test(lines[i]!); i++) rows.push(/^\s*\|[\s:|-]+\|\s*$/.test(lines[i]!) ? '| --- |' : cleanMarkdownLine(lines[i]!.trim()));
      i--;
      if (rows.length > 0) blocks.push({ headings: headings(), text: rows.join('\n') });
      continue;
    }
    // A list item starts a paragraph of its own: items are units, not run together.
    if (LIST_ITEM.test(line)) buffer.push('');
    buffer.push(cleanMarkdownLine(line).replace(LIST_ITEM, ''));
  }
  flush();
  return { title, blocks: blocks.filter((b) => b.text) };
}

const BLOCK_TAGS = new Set(['p', 'li', 'pre', 'blockquote', 'dd', 'dt', 'figcaption', 'div', 'section', 'article', 'br', 'tr']);
const SKIP_TAGS = new Set(['script', 'style', 'noscript', 'template', 'svg', 'head']);
const PAGE_CHROME = new Set(['nav', 'header', 'footer', 'aside', 'form']);

/**
 * HTML: text without markup, scripts or styles; h1–h6 open sections; <title> is the title; a table
 * row is one block, its cells separated by ` | ` (rows are units, as in Markdown tables).
 */
export function extractHtml(content: string, options: { mainContent?: boolean } = {}): Extracted {
  // A web page's own text: its <main> (or role=main) when it marks one, never its navigation,
  // header, footer, sidebars or forms.
  const chrome = options.mainContent ? PAGE_CHROME : undefined;
  const mainOnly = options.mainContent === true && /<main[\s>]|role\s*=\s*["']?main\b/i.test(content);
  let inMain = 0;
  const blocks: Block[] = [];
  const stack: Array<{ level: number; text: string }> = [];
  let text = '';
  let headingText: string | undefined;
  let headingLevel = 0;
  let skipping = 0;
  let inTitle = false;
  let title = '';
  let inRow = 0;
  const flush = () => {
    const clean = text.replace(/\s+/g, ' ').replace(/(\s*\|\s*)+$/, '').trim();
    if (clean) blocks.push({ headings: stack.map((h) => h.text), text: clean });
    text = '';
  };
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if ((SKIP_TAGS.has(name) && name !== 'head') || chrome?.has(name)) skipping++;
        if (mainOnly && (name === 'main' || attributes.role === 'main' || inMain > 0)) inMain++;
        if (name === 'title') inTitle = true;
        const h = /^h([1-6])$/.exec(name);
        if (h) {
          flush();
          headingText = '';
          headingLevel = Number(h[1]);
        } else if (name === 'tr') {
          flush();
          inRow++;
        } else if (BLOCK_TAGS.has(name)) {
          if (inRow > 0) text += ' ';
          else flush();
        }
      },
      ontext(data) {
        if (inTitle) title += data;
        else if (skipping > 0 || (mainOnly && inMain === 0)) return;
        else if (headingText !== undefined) headingText += data;
        else text += data;
      },
      onclosetag(name) {
        if ((SKIP_TAGS.has(name) && name !== 'head') || chrome?.has(name)) skipping--;
        if (inMain > 0) inMain--;
        if (name === 'title') inTitle = false;
        if (/^h[1-6]$/.test(name) && headingText !== undefined) {
          const clean = headingText.replace(/\s+/g, ' ').trim();
          while (stack.length > 0 && stack[stack.length - 1]!.level >= headingLevel) stack.pop();
          if (clean) stack.push({ level: headingLevel, text: clean });
          headingText = undefined;
        } else if (name === 'td' || name === 'th') {
          text += ' | ';
        } else if (name === 'tr') {
          inRow = Math.max(0, inRow - 1);
          flush();
        } else if (BLOCK_TAGS.has(name)) {
          if (inRow > 0) text += ' ';
          else flush();
        }
      },
    },
    { decodeEntities: true },
  );
  parser.write(content);
  parser.end();
  flush();
  const cleanTitle = title.replace(/\s+/g, ' ').trim();
  return { title: cleanTitle || stack[0]?.text || blocks.find((b) => b.headings.length)?.headings[0], blocks };
}

/** JSON: each object of a top-level array is a block of `path: value` lines; otherwise one per leaf group. */
export function extractJson(content: string): Extracted {
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    return extractText(content); // not valid JSON: index it as text rather than lose it
  }
  const lines = (v: unknown, path: string, out: string[]) => {
    if (v === null || v === undefined) return;
    if (Array.isArray(v)) v.forEach((item, i) => lines(item, `${path}[${i}]`, out));
    else if (typeof v === 'object') for (const [k, child] of Object.entries(v)) lines(child, path ? `${path}.${k}` : k, out);
    else out.push(path ? `${path}: ${textOf(v)}` : textOf(v));
  };
  const items = Array.isArray(value) ? value : [value];
  const blocks: Block[] = [];
  for (const item of items) {
    const out: string[] = [];
    lines(item, '', out);
    if (out.length) blocks.push({ headings: [], text: out.join('\n') });
  }
  return { blocks };
}

/** CSV: a header row, then each row as `column: value` pairs. */
export function extractCsv(content: string): Extracted {
  let rows: string[][];
  try {
    // Without `columns`, csv-parse's typings cannot say that each record is an array of strings.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
    rows = parseCsv(content, { relax_column_count: true, skip_empty_lines: true, bom: true }) as string[][];
  } catch {
    return extractText(content);
  }
  const [header, ...data] = rows;
  if (!header) return { blocks: [] };
  return {
    blocks: data.map((row) => ({
      headings: [],
      text: row.map((cell, i) => `${header[i] ?? `column${i + 1}`}: ${cell}`).filter((s) => !s.endsWith(': ')).join('; '),
    })),
  };
}

export function extract(path: string, content: string, options: { mainContent?: boolean } = {}): Extracted {
  const ext = path.slice(path.lastIndexOf('.') + 1).toLowerCase();
  if (ext === 'md' || ext === 'markdown') return extractMarkdown(content);
  if (ext === 'html' || ext === 'htm') return extractHtml(content, options);
  if (ext === 'json') return extractJson(content);
  if (ext === 'csv') return extractCsv(content);
  return extractText(content);
}
