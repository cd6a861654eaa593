import { buildSync, type Metafile } from 'esbuild';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));

const BUNDLE_TARGET = 'node22';
const BUNDLE_MAIN_FIELDS = ['module', 'main'];
/**
 * Packages the bundles take from elsewhere (paths from the project root, where bundling runs):
 * zod without its locales (see infra/bundling/zod/README.md), and no Ajv, which the MCP SDK
 * imports for a default validator Cairn never uses (infra/bundling/ajv/README.md).
 */
const BUNDLE_ALIAS = { zod: './infra/bundling/zod', 'zod-to-json-schema': './infra/bundling/zod-to-json-schema', ajv: './infra/bundling/ajv', 'ajv-formats': './infra/bundling/ajv-formats' };
/** Left out of the bundles: the AWS SDK v3 the Node.js 22 runtime provides. */
export const BUNDLE_EXTERNALS = ['@aws-sdk/*'];
/** Some dependencies still call require(); give ESM bundles one. */
const ESM_REQUIRE_BANNER = "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);";

export interface BundledFile {
  /** Path from the output directory: `index.mjs` (the handler's), `chunks/…`. */
  path: string;
  bytes: number;
  /** Read when the function starts (the handler's file and what it imports statically), not on first use. */
  atStart: boolean;
}

/**
 * One function's code as Lambda runs it: `index.mjs` exporting `handler`, ESM, minified, for Node
 * 22. Split: a module loaded with `import()` (a route group's sections, the MCP client, YAML, PDF
 * parsing) and what only it uses are files of their own under `chunks/`, which a cold start neither
 * reads nor compiles. esbuild makes a chunk for every `import()` it meets, even in code it then
 * drops as unused: chunks nothing imports are removed, so a function ships only code it can load.
 * `external` leaves packages to the runtime (the AWS SDK, as deployed); tests that run a bundle
 * outside Lambda keep them in.
 */
export function bundleFunction(entry: string, outdir: string, options: { external?: string[]; sourcemap?: boolean } = {}): BundledFile[] {
  const { metafile } = buildSync({
    absWorkingDir: PROJECT_ROOT,
    entryPoints: { index: resolve(PROJECT_ROOT, entry) },
    outdir: resolve(PROJECT_ROOT, outdir),
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: BUNDLE_TARGET,
    mainFields: BUNDLE_MAIN_FIELDS,
    alias: BUNDLE_ALIAS,
    external: options.external ?? [],
    minify: true,
    // Escaped, so that Node holds each file's text as one byte per character (a single other
    // character makes V8 read the whole file as UTF-16).
    charset: 'ascii',
    sourcemap: options.sourcemap ?? false,
    sourcesContent: false,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    banner: { js: ESM_REQUIRE_BANNER },
    metafile: true,
    logLevel: 'silent',
  });
  return keepReachable(metafile, resolve(PROJECT_ROOT, outdir));
}

/** Removes the chunks nothing reaches from `index.mjs`; the rest, each marked whether a start reads it. */
function keepReachable(metafile: Metafile, outdir: string): BundledFile[] {
  // The metafile's paths are from the working directory; these, from the output directory.
  const fromOut = (path: string) => relative(outdir, resolve(PROJECT_ROOT, path));
  const outputs = new Map(Object.entries(metafile.outputs).map(([path, output]) => [fromOut(path), output]));
  const walk = (start: string, kinds: ReadonlySet<string>) => {
    const seen = new Set([start]);
    for (const file of seen) {
      for (const imported of outputs.get(file)?.imports ?? []) if (!imported.external && kinds.has(imported.kind)) seen.add(fromOut(imported.path));
    }
    return seen;
  };
  const atStart = walk('index.mjs', new Set(['import-statement']));
  const reachable = walk('index.mjs', new Set(['import-statement', 'dynamic-import']));
  const files: BundledFile[] = [];
  for (const [path, output] of outputs) {
    const code = path.endsWith('.map') ? path.slice(0, -'.map'.length) : path;
    if (!reachable.has(code)) {
      rmSync(join(outdir, path));
      continue;
    }
    if (path.endsWith('.mjs')) files.push({ path, bytes: withoutUnusedRequire(join(outdir, path)) ?? output.bytes, atStart: atStart.has(path) });
  }
  return files;
}

/**
 * The banner goes on every file, but only the file holding esbuild's `require` shim calls it (every
 * other file's CJS code goes through that shim): elsewhere it is taken off, with the line its source
 * map gave it. Returns the file's new size, or undefined when it keeps the banner.
 */
function withoutUnusedRequire(file: string): number | undefined {
  const text = readFileSync(file, 'utf8');
  const rest = text.startsWith(`${ESM_REQUIRE_BANNER}\n`) ? text.slice(ESM_REQUIRE_BANNER.length + 1) : undefined;
  if (rest === undefined || /\brequire\b/.test(rest)) return undefined;
  writeFileSync(file, rest);
  const map = `${file}.map`;
  if (existsSync(map)) {
    const parsed = JSON.parse(readFileSync(map, 'utf8')) as { mappings: string };
    // One generated line fewer: the first line's (empty) mappings go.
    writeFileSync(map, JSON.stringify({ ...parsed, mappings: parsed.mappings.replace(/^[^;]*;/, '') }));
  }
  return Buffer.byteLength(rest);
}
