import { buildSync } from 'esbuild';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { errorFields } from '../shared/log';
import { sourceStack } from '../shared/source-stack';

/** A module that throws, bundled as the functions are (minified, one line, a map beside it). */
async function bundledThrower(): Promise<() => never> {
  mkdirSync('node_modules/.cache', { recursive: true });
  const dir = resolve(mkdtempSync(join('node_modules/.cache', 'source-stack-')));
  writeFileSync(join(dir, 'thrower.ts'), ['export function fail(): never {', '  const reason: string = `boom`;', '  throw new Error(reason);', '}', ''].join('\n'));
  buildSync({ entryPoints: [join(dir, 'thrower.ts')], outfile: join(dir, 'out', 'index.mjs'), bundle: true, minify: true, format: 'esm', platform: 'node', sourcemap: true, sourcesContent: false, logLevel: 'silent' });
  const { fail } = (await import(pathToFileURL(join(dir, 'out', 'index.mjs')).href)) as { fail: () => never };
  return fail;
}

const stackOf = (fn: () => never) => {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('did not throw');
};

describe('source stacks', () => {
  it('maps a bundled frame to its source file, line and column', async () => {
    const error = stackOf(await bundledThrower());
    expect(error.stack).toMatch(/out\/index\.mjs:1:\d+/);
    const mapped = sourceStack(error.stack!);
    expect(mapped).toMatch(/at \S+ \(.*thrower\.ts:3:9\)/);
    expect(mapped).not.toMatch(/index\.mjs/);
    // The logger's error fields carry the mapped stack.
    expect((errorFields(error).error as { stack: string }).stack).toBe(mapped);
  });

  it('leaves frames without a map as they are', () => {
    const stack = 'Error: x\n    at run (file:///nowhere/at/all.mjs:1:2)\n    at node:internal/process/task_queues:95:5\n    at shared/x.ts:3:4';
    expect(sourceStack(stack)).toBe(stack);
  });
});
