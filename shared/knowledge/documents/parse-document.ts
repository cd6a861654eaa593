import { DocumentError } from '../../errors';
import { extract, type Extracted } from '../../search/extract';
import { parseLimits, type ParseLimits } from './parse-limits';

// Loaded when a file of the format first arrives: a worker that indexes text never evaluates pdf.js.
const BINARY_FORMATS: Record<string, (bytes: Uint8Array, limits: ParseLimits) => Promise<Extracted>> = {
  pdf: async (bytes, limits) => (await import('./pdf')).extractPdf(bytes, limits),
  docx: async (bytes, limits) => (await import('./office')).extractDocx(bytes, limits),
  pptx: async (bytes, limits) => (await import('./office')).extractPptx(bytes, limits),
  xlsx: async (bytes, limits) => (await import('./office')).extractXlsx(bytes, limits),
};

const FORMAT_OF_TYPE: Record<string, string> = {
  'application/pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'pptx',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
};

/** Text formats a path or a content type names (read as UTF-8 by search/extract.ts). */
const TEXT_OF_TYPE: Record<string, string> = { 'text/html': 'html', 'text/markdown': 'md', 'text/csv': 'csv', 'application/json': 'json' };

const extensionOf = (path: string) => (path.includes('.') ? path.slice(path.lastIndexOf('.') + 1).toLowerCase() : '');
const typeOf = (file: { contentType?: string }) => file.contentType?.split(';')[0]?.trim().toLowerCase() ?? '';

/** The format a library reads the file in (pdf, docx, pptx, xlsx), from its extension, else its content type; undefined for text. */
export function libraryFormatOf(file: { path: string; contentType?: string }): string | undefined {
  const ext = extensionOf(file.path);
  if (BINARY_FORMATS[ext]) return ext;
  const format = FORMAT_OF_TYPE[typeOf(file)];
  return format && BINARY_FORMATS[format] ? format : undefined;
}

/** Whether bytes that claim to be text are: NUL bytes or invalid UTF-8 in the first 8 KB say they are not. */
function looksBinary(bytes: Uint8Array): boolean {
  const head = bytes.subarray(0, 8192);
  if (head.includes(0)) return true;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head.length < bytes.length ? head.subarray(0, lastCharBoundary(head)) : head);
    return false;
  } catch {
    return true;
  }
}

/** The end of the last whole UTF-8 character in a prefix cut anywhere. */
function lastCharBoundary(bytes: Uint8Array): number {
  let end = bytes.length;
  for (let i = bytes.length - 1; i >= Math.max(0, bytes.length - 4); i--) {
    if ((bytes[i]! & 0xc0) !== 0x80) {
      end = i;
      break;
    }
  }
  return end;
}

/**
 * A file's text as blocks with headings and, for paged formats, locations (page, slide, sheet).
 * The format comes from the path's extension, else the content type; text formats are read by
 * search/extract.ts (`mainContent`: a crawled page, read without its navigation). A file that
 * cannot be read throws a DocumentError saying why.
 */
export async function parseDocument(
  file: { path: string; contentType?: string; bytes: Uint8Array },
  limits: ParseLimits = parseLimits(),
  options: { mainContent?: boolean } = {},
): Promise<Extracted> {
  const ext = extensionOf(file.path);
  const type = typeOf(file);
  const format = libraryFormatOf(file);
  if (format) return BINARY_FORMATS[format]!(file.bytes, limits);
  if (looksBinary(file.bytes)) {
    throw new DocumentError('UNSUPPORTED_FORMAT', `${ext ? `.${ext}` : 'This'} file is not text, PDF, DOCX, PPTX or XLSX`);
  }
  const text = Buffer.from(file.bytes.buffer, file.bytes.byteOffset, file.bytes.byteLength).toString('utf8');
  if (text.length > limits.maxChars) throw new DocumentError('DOCUMENT_TOO_LARGE', `The file has more than ${limits.maxChars} characters`);
  const textExt = ['md', 'markdown', 'html', 'htm', 'json', 'csv'].includes(ext) ? ext : TEXT_OF_TYPE[type] ?? ext;
  return extract(`file.${textExt}`, text, options);
}
