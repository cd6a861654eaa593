import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { publicApiDocument } from './public-document';

/**
 * `npm run openapi`: writes the public API's OpenAPI document beside the docs function, which
 * serves it without bundling the other route groups. A test fails when it is out of date.
 */
export const DOCUMENT_FILE = fileURLToPath(new URL('./public-openapi.json', import.meta.url));

export function documentText(): string {
  return `${JSON.stringify(publicApiDocument(), null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) writeFileSync(DOCUMENT_FILE, documentText());
