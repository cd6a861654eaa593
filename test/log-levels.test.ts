import { afterAll, expect, it } from 'vitest';

// Set before the logger is made, as Lambda's environment is.
process.env.LOG_LEVEL = 'warn';
const { log, withLogContext } = await import('../shared/log');

// Powertools writes warnings and errors to stderr, the rest to stdout: both are read.
const written: string[] = [];
const streams = [process.stdout, process.stderr];
const realWrites = streams.map((stream) => stream.write.bind(stream));
streams.forEach((stream, i) => {
  stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    if (String(chunk).startsWith('{')) written.push(String(chunk));
    return (realWrites[i] as (...args: unknown[]) => boolean)(chunk, ...rest);
  });
});
afterAll(() => {
  streams.forEach((stream, i) => (stream.write = realWrites[i]!));
});

it('writes the lines at and above LOG_LEVEL, with their context, and none below it', () => {
  withLogContext({ requestId: 'req_levels' }, () => {
    log.debug('debug line');
    log.info('info line');
    log.warn('warn line', { n: 1 });
    log.error('error line');
  });
  const lines = written.map((w) => JSON.parse(w) as Record<string, unknown>).filter((l) => l.requestId === 'req_levels');
  expect(lines.map((l) => [l.level, l.message])).toEqual([
    ['WARN', 'warn line'],
    ['ERROR', 'error line'],
  ]);
  expect(lines[0]).toMatchObject({ n: 1 });
});
