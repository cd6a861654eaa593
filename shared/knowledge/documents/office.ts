import { DocumentError } from '../../errors';
import { strFromU8, unzipSync } from 'fflate';
import { Parser } from 'htmlparser2';
import mammoth from 'mammoth';
import readXlsxFile from 'read-excel-file/node';
import { extractHtml, type Block, type Extracted } from '../../search/extract';
import { type ParseLimits } from './parse-limits';

/** Office files that are encrypted are OLE compound files, not ZIP packages. */
const OLE = [0xd0, 0xcf, 0x11, 0xe0];
const isOle = (bytes: Uint8Array) => OLE.every((b, i) => bytes[i] === b);
const isZip = (bytes: Uint8Array) => bytes[0] === 0x50 && bytes[1] === 0x4b;

function assertPackage(bytes: Uint8Array, kind: string) {
  if (isOle(bytes)) throw new DocumentError('ENCRYPTED_DOCUMENT', `The ${kind} file is password-protected (or in the old binary format)`);
  if (!isZip(bytes)) throw new DocumentError('UNREADABLE_DOCUMENT', `Not a ${kind} file (not an Office Open XML package)`);
}

/** DOCX (mammoth): its HTML keeps headings, lists and tables, read as HTML is. */
export async function extractDocx(bytes: Uint8Array, limits: ParseLimits): Promise<Extracted> {
  assertPackage(bytes, 'DOCX');
  let html: string;
  try {
    html = (await mammoth.convertToHtml({ buffer: Buffer.from(bytes) })).value;
  } catch (error) {
    throw new DocumentError('UNREADABLE_DOCUMENT', `Not a readable DOCX file (${(error as Error).message})`);
  }
  limits.checkDeadline();
  if (html.length > limits.maxChars * 2) throw new DocumentError('DOCUMENT_TOO_LARGE', `The document has more than ${limits.maxChars} characters of text`);
  const extracted = extractHtml(html);
  if (extracted.blocks.length === 0) throw new DocumentError('NO_TEXT', 'The document has no text');
  return extracted;
}

/** The package's parts the filter admits, refusing one that would unpack beyond `maxBytes` in all. */
function unzipParts(bytes: Uint8Array, wanted: (name: string) => boolean, maxBytes: number, kind: string): Record<string, Uint8Array> {
  assertPackage(bytes, kind);
  let total = 0;
  try {
    return unzipSync(bytes, {
      filter: (file) => {
        if (!wanted(file.name)) return false;
        total += file.originalSize;
        if (total > maxBytes) throw new DocumentError('DOCUMENT_TOO_LARGE', `The ${kind} file unpacks to more than ${maxBytes} bytes`);
        return true;
      },
    });
  } catch (error) {
    if (error instanceof DocumentError) throw error;
    throw new DocumentError('UNREADABLE_DOCUMENT', `Not a readable ${kind} file (${(error as Error).message})`);
  }
}

/** Walks XML, calling `open`/`close` with element names (namespace prefixes kept) and `text` with character data. */
function walkXml(xml: string, handlers: { open?: (name: string, attributes: Record<string, string>) => void; close?: (name: string) => void; text?: (text: string) => void }) {
  const parser = new Parser({ onopentag: handlers.open, onclosetag: handlers.close, ontext: handlers.text }, { xmlMode: true, decodeEntities: true });
  parser.write(xml);
  parser.end();
}

/** The slides' part names in the deck's order (presentation.xml's list, through its relationships). */
function slideOrder(parts: Record<string, Uint8Array>): string[] {
  const targets = new Map<string, string>();
  const rels = parts['ppt/_rels/presentation.xml.rels'];
  if (rels) walkXml(strFromU8(rels), { open: (name, a) => name.endsWith('Relationship') && a.Id && a.Target && targets.set(a.Id, `ppt/${a.Target.replace(/^\/?ppt\//, '')}`) });
  const order: string[] = [];
  const presentation = parts['ppt/presentation.xml'];
  if (presentation) walkXml(strFromU8(presentation), { open: (name, a) => name === 'p:sldId' && a['r:id'] && targets.has(a['r:id']) && order.push(targets.get(a['r:id'])!) });
  if (order.length > 0) return order.filter((name) => parts[name]);
  const number = (name: string) => Number(/slide(\d+)\.xml$/.exec(name)?.[1] ?? 0);
  return Object.keys(parts).filter((n) => /^ppt\/slides\/slide\d+\.xml$/.test(n)).sort((a, b) => number(a) - number(b));
}

/** One slide: its title (the title placeholder, else the first shape's text) and its paragraphs and table rows. */
function slideText(xml: string): { title?: string; paragraphs: string[] } {
  const paragraphs: string[] = [];
  let title: string | undefined;
  let shapeIsTitle = false;
  let shapeText: string[] = [];
  let paragraph = '';
  let row: string[] | undefined;
  let cell = '';
  let inCell = false;
  walkXml(xml, {
    open(name, a) {
      if (name === 'p:sp') {
        shapeIsTitle = false;
        shapeText = [];
      } else if (name === 'p:ph' && (a.type === 'title' || a.type === 'ctrTitle')) shapeIsTitle = true;
      else if (name === 'a:tr') row = [];
      else if (name === 'a:tc') {
        inCell = true;
        cell = '';
      } else if (name === 'a:br') paragraph += ' ';
    },
    text(t) {
      if (inCell) cell += t;
      else paragraph += t;
    },
    close(name) {
      if (name === 'a:t' && inCell) cell += ' ';
      if (name === 'a:p' && !inCell) {
        const clean = paragraph.replace(/\s+/g, ' ').trim();
        if (clean) shapeText.push(clean);
        paragraph = '';
      } else if (name === 'a:tc') {
        row?.push(cell.replace(/\s+/g, ' ').trim());
        inCell = false;
      } else if (name === 'a:tr' && row) {
        if (row.some(Boolean)) paragraphs.push(row.join(' | '));
        row = undefined;
      } else if (name === 'p:sp') {
        if (shapeIsTitle && title === undefined) title = shapeText.join(' ');
        else paragraphs.push(...shapeText);
        shapeText = [];
      }
    },
  });
  if (title === undefined && paragraphs.length > 0 && paragraphs[0]!.length <= 120) title = paragraphs.shift();
  return { title, paragraphs };
}

/** PPTX (the package unzipped by fflate, its slides' XML read): each slide a section titled by its title, located by its number. */
export function extractPptx(bytes: Uint8Array, limits: ParseLimits): Extracted {
  const parts = unzipParts(bytes, (name) => /^ppt\/(slides\/slide\d+\.xml|presentation\.xml|_rels\/presentation\.xml\.rels)$/.test(name), limits.maxChars * 10, 'PPTX');
  const slides = slideOrder(parts);
  if (slides.length === 0) throw new DocumentError('UNREADABLE_DOCUMENT', 'The PPTX file has no slides');
  if (slides.length > limits.maxPages) throw new DocumentError('DOCUMENT_TOO_LARGE', `The deck has ${slides.length} slides; at most ${limits.maxPages} are indexed per file`);
  const blocks: Block[] = [];
  let deckTitle: string | undefined;
  slides.forEach((name, index) => {
    limits.checkDeadline();
    const { title, paragraphs } = slideText(strFromU8(parts[name]!));
    const slide = index + 1;
    const heading = title ?? `Slide ${slide}`;
    if (index === 0) deckTitle = title;
    for (const text of paragraphs) blocks.push({ headings: [heading], text, location: { slide } });
    if (paragraphs.length === 0 && title) blocks.push({ headings: [], text: title, location: { slide } });
  });
  if (blocks.length === 0) throw new DocumentError('NO_TEXT', 'The deck has no text');
  return { title: deckTitle, blocks };
}

const cellText = (value: unknown): string => {
  if (value instanceof Date) return value.toISOString().slice(0, value.getUTCHours() || value.getUTCMinutes() ? 16 : 10);
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value).trim();
  return '';
};

/**
 * XLSX (read-excel-file): each sheet a section named after it; its first row is the header and
 * every further row a block of `header: value` pairs (as CSV files are read), located by sheet and row.
 */
export async function extractXlsx(bytes: Uint8Array, limits: ParseLimits): Promise<Extracted> {
  assertPackage(bytes, 'XLSX');
  let sheets: Awaited<ReturnType<typeof readXlsxFile>>;
  try {
    sheets = await readXlsxFile(Buffer.from(bytes));
  } catch (error) {
    throw new DocumentError('UNREADABLE_DOCUMENT', `Not a readable XLSX file (${(error as Error).message})`);
  }
  const blocks: Block[] = [];
  let chars = 0;
  for (const { sheet, data } of sheets) {
    limits.checkDeadline();
    const rows = data.map((row) => row.map(cellText));
    const headerIndex = rows.findIndex((row) => row.some(Boolean));
    if (headerIndex < 0) continue;
    const header = rows[headerIndex]!;
    for (let r = headerIndex + 1; r < rows.length; r++) {
      const text = rows[r]!
        .map((cell, i) => (cell ? `${header[i] || `column ${i + 1}`}: ${cell}` : ''))
        .filter(Boolean)
        .join('; ');
      if (!text) continue;
      chars += text.length;
      if (chars > limits.maxChars) throw new DocumentError('DOCUMENT_TOO_LARGE', `The workbook has more than ${limits.maxChars} characters of text`);
      blocks.push({ headings: [sheet], text, location: { sheet } });
    }
    // A sheet of one row (a list of labels) still says something.
    if (rows.length === headerIndex + 1) blocks.push({ headings: [sheet], text: header.filter(Boolean).join(' | '), location: { sheet } });
  }
  if (blocks.length === 0) throw new DocumentError('NO_TEXT', 'The workbook has no cells with text');
  return { blocks };
}
