import { DocumentError } from '../shared/errors';
import { describe, expect, it } from 'vitest';
import { parseLimits } from '../shared/knowledge/documents/parse-limits';
import { parseDocument } from '../shared/knowledge/documents/parse-document';
import { chunkBlocks } from '../shared/search/chunker';
import { makeDocx, makeEncryptedPdf, makePdf, makePptx, makeScannedPdf, makeXlsx } from './helpers/documents';

async function parseError(file: { path: string; bytes: Uint8Array; contentType?: string }): Promise<DocumentError> {
  const error = await parseDocument(file).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DocumentError);
  return error as DocumentError;
}

describe('document parsing', () => {
  it('reads a PDF page by page: headings from the larger type, paragraphs, the page of every block', async () => {
    const bytes = await makePdf(
      [
        { heading: 'Installation', lines: ['Mount the pump on a level floor.', 'Connect the inlet hose first.'] },
        { heading: 'Maintenance', lines: ['Replace the valve seal every 2,000 hours.'] },
        { lines: ['The warranty lasts 24 months from delivery.'] },
      ],
      { title: 'Pump manual' },
    );
    const { title, blocks } = await parseDocument({ path: 'manuals/pump.pdf', bytes });
    expect(title).toBe('Pump manual');
    expect(blocks).toEqual([
      { headings: ['Installation'], text: 'Mount the pump on a level floor. Connect the inlet hose first.', location: { page: 1 } },
      { headings: ['Maintenance'], text: 'Replace the valve seal every 2,000 hours.', location: { page: 2 } },
      { headings: ['Maintenance'], text: 'The warranty lasts 24 months from delivery.', location: { page: 3 } },
    ]);
  });

  it('says why a PDF cannot be read: password, damage, no text layer', async () => {
    expect((await parseError({ path: 'secret.pdf', bytes: makeEncryptedPdf() })).code).toBe('ENCRYPTED_DOCUMENT');
    expect((await parseError({ path: 'broken.pdf', bytes: Buffer.from('%PDF-1.7 this is not really a PDF') })).code).toBe('UNREADABLE_DOCUMENT');
    const scanned = await parseError({ path: 'scan.pdf', bytes: await makeScannedPdf() });
    expect(scanned.code).toBe('NO_TEXT');
    expect(scanned.message).toMatch(/scanned/);
  });

  it('bounds a PDF by pages and time', async () => {
    const bytes = await makePdf([{ lines: ['one'] }, { lines: ['two'] }, { lines: ['three'] }]);
    expect((await parseDocument({ path: 'a.pdf', bytes }, parseLimits({ maxPages: 2 })).catch((e: DocumentError) => e)) as DocumentError).toMatchObject({ code: 'DOCUMENT_TOO_LARGE' });
    expect((await parseDocument({ path: 'a.pdf', bytes }, parseLimits({ timeoutMs: -1 })).catch((e: DocumentError) => e)) as DocumentError).toMatchObject({ code: 'PARSE_TIMEOUT' });
  });

  it('reads a DOCX with its headings, list items and table rows', async () => {
    const bytes = await makeDocx({
      title: 'Returns policy',
      sections: [{ heading: 'Time limits', paragraphs: ['Items can be returned within 30 days.'], bullets: ['Keep the receipt', 'Use the original box'] }],
      table: [
        ['Region', 'Days'],
        ['EU', '30'],
        ['US', '14'],
      ],
    });
    const { title, blocks } = await parseDocument({ path: 'policies/returns.docx', bytes });
    expect(title).toBe('Returns policy');
    expect(blocks).toContainEqual({ headings: ['Returns policy', 'Time limits'], text: 'Items can be returned within 30 days.' });
    expect(blocks).toContainEqual({ headings: ['Returns policy', 'Time limits'], text: 'Keep the receipt' });
    expect(blocks).toContainEqual({ headings: ['Returns policy', 'Time limits'], text: 'EU | 30' });
  });

  it('reads a PPTX slide by slide, each titled by its title placeholder', async () => {
    const bytes = await makePptx([
      { title: 'Quarterly results', body: ['Revenue grew 12 percent.', 'Churn fell to 3 percent.'] },
      { title: 'Next steps', body: ['Open the Lisbon office in March.'] },
    ]);
    const { title, blocks } = await parseDocument({ path: 'decks/q3.pptx', bytes });
    expect(title).toBe('Quarterly results');
    expect(blocks).toEqual([
      { headings: ['Quarterly results'], text: 'Revenue grew 12 percent.', location: { slide: 1 } },
      { headings: ['Quarterly results'], text: 'Churn fell to 3 percent.', location: { slide: 1 } },
      { headings: ['Next steps'], text: 'Open the Lisbon office in March.', location: { slide: 2 } },
    ]);
  });

  it('reads an XLSX sheet by sheet, each row as header: value pairs', async () => {
    const bytes = await makeXlsx([
      { name: 'Prices', rows: [['Product', 'Price'], ['Valve seal', 12.5], ['Inlet hose', 30]] },
      { name: 'Contacts', rows: [['Team', 'Email'], ['Support', 'help@example.com']] },
    ]);
    const { blocks } = await parseDocument({ path: 'data/prices.xlsx', bytes });
    expect(blocks).toEqual([
      { headings: ['Prices'], text: 'Product: Valve seal; Price: 12.5', location: { sheet: 'Prices' } },
      { headings: ['Prices'], text: 'Product: Inlet hose; Price: 30', location: { sheet: 'Prices' } },
      { headings: ['Contacts'], text: 'Team: Support; Email: help@example.com', location: { sheet: 'Contacts' } },
    ]);
  });

  it('tells encrypted and damaged Office files apart', async () => {
    const ole = Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(512)]);
    for (const path of ['a.docx', 'a.pptx', 'a.xlsx']) {
      expect((await parseError({ path, bytes: ole })).code).toBe('ENCRYPTED_DOCUMENT');
      expect((await parseError({ path, bytes: Buffer.from('PK\u0003\u0004 truncated') })).code).toBe('UNREADABLE_DOCUMENT');
    }
  });

  it('takes the format from the content type when the path has no extension, and refuses other binaries', async () => {
    const bytes = await makePdf([{ lines: ['Only page.'] }]);
    expect((await parseDocument({ path: 'download', contentType: 'application/pdf', bytes })).blocks[0]?.location).toEqual({ page: 1 });
    expect((await parseError({ path: 'photo.png', bytes: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]) })).code).toBe('UNSUPPORTED_FORMAT');
    expect((await parseDocument({ path: 'notes.txt', bytes: Buffer.from('Plain words, plainly.') })).blocks[0]?.text).toBe('Plain words, plainly.');
  });

  it('cites page 2 of a two-page PDF whose short pages would fit in one chunk, when the answer is on page 2', async () => {
    const bytes = await makePdf([{ lines: ['Opening hours are nine to five.'] }, { lines: ['Refunds are paid within 14 days.'] }]);
    const { blocks } = await parseDocument({ path: 'short.pdf', bytes });
    const chunks = chunkBlocks('Short', blocks);
    expect(chunks.find((c) => c.text.includes('Refunds'))!.location).toEqual({ page: 2 });
    expect(chunks.find((c) => c.text.includes('Opening'))!.location).toEqual({ page: 1 });
  });

  it('keeps each page in chunks of its own, so a passage cites the page its sentences are on', () => {
    const chunks = chunkBlocks(
      'Manual',
      [
        { headings: [], text: 'a'.repeat(150) + '.', location: { page: 1 } },
        { headings: [], text: 'b'.repeat(150) + '.', location: { page: 2 } },
        { headings: [], text: 'c'.repeat(300) + '.', location: { page: 3 } },
      ],
      { size: 400, overlap: 0 },
    );
    // Short pages that would fit in one chunk stay apart: the answer on page 2 is cited as page 2.
    expect(chunks.map((c) => c.location)).toEqual([{ page: 1 }, { page: 2 }, { page: 3 }]);
    expect(chunks[1]!.text).toBe(`${'b'.repeat(150)}.`);
  });
});

describe('damaged documents', () => {
  it('answers a DocumentError (or text) for any truncation or corruption of a valid file, never another error', async () => {
    const valid = {
      pdf: await makePdf([{ heading: 'One', lines: ['first page'] }, { lines: ['second page'] }]),
      docx: await makeDocx({ title: 'Doc', sections: [{ heading: 'A', paragraphs: ['text'] }] }),
      pptx: await makePptx([{ title: 'Slide', body: ['body'] }]),
      xlsx: await makeXlsx([{ name: 'S', rows: [['h'], ['v']] }]),
    };
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (const [format, bytes] of Object.entries(valid)) {
      for (let i = 0; i < 12; i++) {
        const damaged = Uint8Array.from(bytes);
        if (i % 2 === 0) {
          // cut short
          const cut = damaged.subarray(0, Math.floor(random() * damaged.length));
          damaged.set(cut);
          const outcome = await parseDocument({ path: `x.${format}`, bytes: cut }).catch((e: unknown) => e);
          expect(outcome instanceof DocumentError || Array.isArray((outcome as { blocks?: unknown }).blocks), `${format} cut at ${cut.length}: ${String(outcome)}`).toBe(true);
        } else {
          // bytes flipped in the middle
          for (let j = 0; j < 40; j++) damaged[Math.floor(damaged.length / 4 + random() * (damaged.length / 2))] = Math.floor(random() * 256);
          const outcome = await parseDocument({ path: `x.${format}`, bytes: damaged }).catch((e: unknown) => e);
          expect(outcome instanceof DocumentError || Array.isArray((outcome as { blocks?: unknown }).blocks), `${format} corrupted: ${String(outcome)}`).toBe(true);
        }
      }
    }
  });
});
