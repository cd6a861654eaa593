import { readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * A stack trace in the source's terms (`shared/store/executions.ts:120:11`) where the code runs
 * bundled with source maps beside it, as in Lambda. Node's `--enable-source-maps` does the same for
 * every error, but reads and indexes the map of every file it loads as it loads it: 13 ms of a
 * 65 ms cold start, paid by every start for errors most never meet. Here a file's map is read the
 * first time a logged error's stack passes through that file, and kept.
 */
const maps = new Map<string, SourceMap | null>();

function mapOf(file: string): SourceMap | null {
  let map = maps.get(file);
  if (map === undefined) {
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')) as SourceMapPayload);
    } catch {
      map = null; // No map beside it (a dependency loaded from node_modules, code run from source).
    }
    maps.set(file, map);
  }
  return map;
}

/** `at fn (file:///var/task/chunks/x.mjs:1:2345)` or `at file:///var/task/index.mjs:1:99`. */
const FRAME = /((?:file:\/\/)?\/[^\s():]+\.m?js):(\d+):(\d+)(\)?)$/;

/** The place a map gives for a generated position, as a path from the project (`../` dropped). */
function original(map: SourceMap, line: number, column: number): string | undefined {
  const entry = map.findEntry(line - 1, column - 1);
  if (!('originalSource' in entry) || !entry.originalSource) return undefined;
  const source = entry.originalSource.replace(/^(?:\.\.\/)+/, '');
  return `${source}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
}

export function sourceStack(stack: string): string {
  return stack
    .split('\n')
    .map((line) => {
      const frame = FRAME.exec(line);
      if (!frame) return line;
      const [whole, location, row, column, close] = frame;
      const map = mapOf(location!.startsWith('file:') ? fileURLToPath(location!) : location!);
      const place = map && original(map, Number(row), Number(column));
      return place ? `${line.slice(0, -whole.length)}${place}${close}` : line;
    })
    .join('\n');
}
