import { DocumentError } from '../../errors';
import { getDocumentProxy } from 'unpdf';
import type { Block, Extracted } from '../../search/extract';
import { type ParseLimits } from './parse-limits';

interface TextItem {
  str: string;
  hasEOL: boolean;
  transform: number[];
  height: number;
}

interface Line {
  text: string;
  size: number;
  y: number;
}

/** A page's text items as lines, with their font size and vertical position. */
function linesOf(items: TextItem[]): Line[] {
  const lines: Line[] = [];
  let text = '';
  let size = 0;
  let y = 0;
  for (const item of items) {
    if (item.str) {
      if (!text) y = item.transform[5] ?? 0;
      text += item.str;
      size = Math.max(size, Math.abs(item.transform[3] ?? item.height));
    }
    if (item.hasEOL && text.trim()) {
      lines.push({ text: text.replace(/\s+/g, ' ').trim(), size, y });
      text = '';
      size = 0;
    }
  }
  if (text.trim()) lines.push({ text: text.replace(/\s+/g, ' ').trim(), size, y });
  return lines;
}

/** The size most of the document's text is set in: larger, short lines are headings. */
function bodySize(pages: Line[][]): number {
  const counts = new Map<number, number>();
  for (const line of pages.flat()) counts.set(Math.round(line.size), (counts.get(Math.round(line.size)) ?? 0) + line.text.length);
  return [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 0;
}

/**
 * PDF (pdf.js through unpdf): each page's text as lines; a line set clearly larger than the body
 * text and short is a heading; a vertical gap wider than a line and a half starts a paragraph.
 * Every block carries its page. Encrypted, damaged and text-less (scanned) files are errors.
 */
export async function extractPdf(bytes: Uint8Array, limits: ParseLimits): Promise<Extracted> {
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // pdf.js takes ownership of the buffer it is given: hand it a copy.
    pdf = await getDocumentProxy(new Uint8Array(bytes), { isEvalSupported: false, disableFontFace: true, useSystemFonts: false, verbosity: 0 });
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name === 'PasswordException') throw new DocumentError('ENCRYPTED_DOCUMENT', 'The PDF is password-protected');
    throw new DocumentError('UNREADABLE_DOCUMENT', `Not a readable PDF (${(error as Error).message})`);
  }
  try {
    if (pdf.numPages > limits.maxPages) throw new DocumentError('DOCUMENT_TOO_LARGE', `The PDF has ${pdf.numPages} pages; at most ${limits.maxPages} are indexed per file`);
    const pages: Line[][] = [];
    let chars = 0;
    for (let n = 1; n <= pdf.numPages; n++) {
      limits.checkDeadline();
      const page = await pdf.getPage(n);
      const content = await page.getTextContent();
      const lines = linesOf(content.items as TextItem[]);
      page.cleanup();
      chars += lines.reduce((sum, l) => sum + l.text.length, 0);
      if (chars > limits.maxChars) throw new DocumentError('DOCUMENT_TOO_LARGE', `The PDF has more than ${limits.maxChars} characters of text`);
      pages.push(lines);
    }
    if (chars === 0) throw new DocumentError('NO_TEXT', 'The PDF has no text layer (a scanned document needs OCR, which is not done here)');
    const metadata = await pdf.getMetadata().catch(() => undefined);
    const info: { Title?: unknown } | undefined = metadata?.info;
    const infoTitle = info?.Title;
    return blocksOf(pages, typeof infoTitle === 'string' && infoTitle.trim() ? infoTitle.trim() : undefined);
  } catch (error) {
    // A page that pdf.js cannot read is the file's fault, not the worker's: reported on the file.
    if (error instanceof DocumentError) throw error;
    throw new DocumentError('UNREADABLE_DOCUMENT', `A page of the PDF cannot be read (${(error as Error).message})`);
  } finally {
    await pdf.destroy();
  }
}

function blocksOf(pages: Line[][], infoTitle: string | undefined): Extracted {
  const body = bodySize(pages);
  const blocks: Block[] = [];
  let headings: string[] = [];
  let title = infoTitle;
  pages.forEach((lines, index) => {
    const page = index + 1;
    let paragraph: string[] = [];
    let lastY: number | undefined;
    let lastSize = body;
    const flush = () => {
      const text = paragraph.join(' ').replace(/(\w)- (\w)/g, '$1$2').trim();
      if (text) blocks.push({ headings, text, location: { page } });
      paragraph = [];
    };
    for (const line of lines) {
      const isHeading = body > 0 && line.size >= body * 1.15 && line.text.length <= 120 && /\p{L}/u.test(line.text);
      if (isHeading) {
        flush();
        // Larger type is a higher level: a heading replaces those at its size or smaller.
        headings = line.size >= body * 1.6 ? [line.text] : [headings[0] ?? title ?? '', line.text].filter(Boolean);
        if (title === undefined && page === 1) title = line.text;
        lastY = line.y;
        continue;
      }
      if (lastY !== undefined && Math.abs(lastY - line.y) > Math.max(line.size, lastSize) * 1.6) flush();
      paragraph.push(line.text);
      lastY = line.y;
      lastSize = line.size;
    }
    flush();
  });
  return { title, blocks };
}
