import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('..', import.meta.url).pathname;
const committed = join(root, 'console/dist');

function filesOf(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out.set(relative(dir, path), readFileSync(path, 'utf8'));
  }
  return out;
}

describe('the console build', () => {
  it('is committed as its sources build it (npm run console:build), so npm start serves what the sources say', () => {
    const fresh = mkdtempSync(join(tmpdir(), 'cairn-console-build-'));
    execFileSync(process.execPath, [join(root, 'node_modules/vite/bin/vite.js'), 'build', '--config', 'console/vite.config.ts', '--outDir', fresh, '--emptyOutDir', '--logLevel', 'error'], {
      cwd: root,
      // vitest sets NODE_ENV=test, which would build the development flavour of the libraries.
      env: { ...process.env, NODE_ENV: 'production' },
    });
    const built = filesOf(fresh);
    expect([...filesOf(committed).keys()].sort()).toEqual([...built.keys()].sort());
    for (const [path, text] of filesOf(committed)) expect(text, `${path} differs: run npm run console:build`).toBe(built.get(path));
  });

  it('loads nothing from another origin at run time (no CDN)', () => {
    for (const [path, text] of filesOf(committed)) {
      if (path.endsWith('.html') || path.endsWith('.css')) expect(text, path).not.toMatch(/(src|href)=["']?https?:|url\(["']?https?:/);
    }
  });
});
