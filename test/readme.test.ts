import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runScript, waitFor, type Started } from './helpers/processes';

/**
 * The README is the front page: its walk-through must work as written. It is run here, as a reader
 * runs it — bash, curl and jq against `npm start` — with the key the banner printed and the port the
 * server took; and every link of the README and docs/ must lead to a file that exists.
 */
const readme = readFileSync('README.md', 'utf8');
let server: Started | undefined;

afterAll(async () => {
  if (server && server.child.exitCode === null) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
});

/** The first sh block after a heading. */
function blockAfter(text: string, heading: string): string {
  const from = text.indexOf(`\n${heading}\n`);
  expect(from, heading).toBeGreaterThan(0);
  const start = text.indexOf('```sh\n', from) + '```sh\n'.length;
  return text.slice(start, text.indexOf('\n```', start));
}

function runBash(script: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-eo', 'pipefail', '-c', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => resolve({ code, out }));
  });
}

describe('the README', () => {
  it('is a front page: at most 400 lines', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(400);
  });

  it('links only to files that exist (README and docs/)', () => {
    const pages = ['README.md', ...readdirSync('docs').filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];
    const broken: string[] = [];
    for (const page of pages) {
      for (const [, target] of readFileSync(page, 'utf8').matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        if (!existsSync(join(dirname(page), target!))) broken.push(`${page} → ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('walks through the API as written, against npm start', async () => {
    server = runScript('local/server.ts', [], { PORT: '0', DATA_DIR: ':memory:', API_KEY_CACHE_SECONDS: '0' });
    await waitFor(() => /DEV_API_KEY=\S+/.test(server!.output()) || server!.child.exitCode !== null, 'the server banner', 90_000);
    const key = /DEV_API_KEY=(\S+)/.exec(server.output())?.[1];
    if (!key) throw new Error(`the server did not start:\n${server.output()}`);
    const port = /Cairn is running at http:\/\/localhost:(\d+)/.exec(server.output())![1]!;
    const walk = blockAfter(readme, '## A walk through the API');
    expect(walk).toMatch(/^KEY=cak_…/m);
    const script = walk.replace(/^KEY=cak_….*$/m, `KEY=${key}`).replaceAll('localhost:3000', `localhost:${port}`);
    const { code, out } = await runBash(script);
    expect(code, out).toBe(0);
    expect(out).toContain('{"status":"ok"}');
    expect(out).toContain('Items can be returned within 30 days of delivery.');
    expect(out).toMatch(/"cited": \[\s*"returns.md"/);
    expect(out).toContain('Refunds are paid within 5 working days');
    expect(out).toMatch(/"status": "succeeded",\s*"category": "returns"/);
    expect(out).toMatch(/"deleted":true/);
  }, 120_000);
});
