import { unzipSync, zipSync } from 'fflate';
import { AlignmentType, Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import PptxGenJS from 'pptxgenjs';
import writeXlsxFile from 'write-excel-file/node';

/**
 * Office documents and PDFs made by the tests themselves with the libraries that write them (no
 * downloads, nothing binary committed): what a team would upload.
 */

/** A PDF whose pages each have a heading (20 pt) and body lines (11 pt). */
export async function makePdf(pages: Array<{ heading?: string; lines: string[] }>, options: { title?: string } = {}): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  if (options.title) doc.setTitle(options.title);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  for (const { heading, lines } of pages) {
    const page = doc.addPage([595, 842]);
    let y = 780;
    if (heading) {
      page.drawText(heading, { x: 50, y, size: 20, font: bold });
      y -= 40;
    }
    for (const line of lines) {
      page.drawText(line, { x: 50, y, size: 11, font });
      y -= 15;
    }
  }
  return doc.save();
}

/** A PDF page with no text at all: what a scanner produces without OCR. */
export async function makeScannedPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  page.drawRectangle({ x: 50, y: 50, width: 400, height: 600 });
  return doc.save();
}

/**
 * A PDF encrypted with the standard security handler (RC4, revision 2) under a user password: its
 * /U entry does not match the empty password, so a reader must ask for one.
 */
export function makeEncryptedPdf(): Uint8Array {
  const hex32 = (byte: string) => byte.repeat(32);
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>',
    `<< /Filter /Standard /V 1 /R 2 /O <${hex32('ab')}> /U <${hex32('cd')}> /P -44 >>`,
  ];
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(body.length);
    body += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Encrypt 4 0 R /ID [<${'11'.repeat(16)}> <${'11'.repeat(16)}>] >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

/** A DOCX with a title heading, sections, a bulleted list and a table. */
export async function makeDocx(content: { title: string; sections: Array<{ heading: string; paragraphs: string[]; bullets?: string[] }>; table?: string[][] }): Promise<Uint8Array> {
  const children: Array<Paragraph | Table> = [new Paragraph({ text: content.title, heading: HeadingLevel.HEADING_1 })];
  for (const section of content.sections) {
    children.push(new Paragraph({ text: section.heading, heading: HeadingLevel.HEADING_2 }));
    for (const text of section.paragraphs) children.push(new Paragraph({ text, alignment: AlignmentType.LEFT }));
    for (const text of section.bullets ?? []) children.push(new Paragraph({ text, bullet: { level: 0 } }));
  }
  if (content.table) {
    children.push(new Table({ rows: content.table.map((row) => new TableRow({ children: row.map((cell) => new TableCell({ children: [new Paragraph(cell)] })) })) }));
  }
  return new Uint8Array(await Packer.toBuffer(new Document({ sections: [{ children }] })));
}

/** A PPTX whose slides have a title placeholder and body text. */
export async function makePptx(slides: Array<{ title: string; body: string[] }>): Promise<Uint8Array> {
  const deck = new PptxGenJS();
  deck.defineSlideMaster({ title: 'TITLED', objects: [{ placeholder: { options: { name: 'title', type: 'title', x: 0.5, y: 0.3, w: 9, h: 1 }, text: '' } }] });
  for (const { title, body } of slides) {
    const slide = deck.addSlide({ masterName: 'TITLED' });
    slide.addText(title, { placeholder: 'title' });
    slide.addText(body.map((text) => ({ text, options: { breakLine: true } })), { x: 0.5, y: 1.8, w: 9, h: 3 });
  }
  return new Uint8Array((await deck.write({ outputType: 'nodebuffer' })) as Buffer);
}

/** An XLSX with one sheet per entry; each sheet's first row is its header. */
export async function makeXlsx(sheets: Array<{ name: string; rows: Array<Array<string | number>> }>): Promise<Uint8Array> {
  const data = sheets.map(({ name, rows }) => ({ sheet: name, data: rows.map((row) => row.map((value) => ({ value }))) }));
  const blob = await writeXlsxFile(data).toBuffer();
  return new Uint8Array(blob);
}

/**
 * A DOCX well under a megabyte whose document unpacks to `megabytes` MB of XML: what an attacker
 * (or an export gone wrong) uploads to exhaust a reader's memory.
 */
export async function makeDocxBomb(megabytes: number): Promise<Uint8Array> {
  const files = unzipSync(await makeDocx({ title: 'Bomb', sections: [] }));
  const encoder = new TextEncoder();
  const head = encoder.encode('<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>');
  const tail = encoder.encode('</w:body></w:document>');
  const paragraph = encoder.encode(`<w:p><w:r><w:t>${'lorem ipsum dolor sit amet '.repeat(4)}</w:t></w:r></w:p>`);
  const count = Math.floor((megabytes * 1024 * 1024) / paragraph.length);
  const xml = new Uint8Array(head.length + count * paragraph.length + tail.length);
  xml.set(head, 0);
  for (let i = 0; i < count; i++) xml.set(paragraph, head.length + i * paragraph.length);
  xml.set(tail, head.length + count * paragraph.length);
  return zipSync({ ...files, 'word/document.xml': [xml, { level: 9 }] });
}
