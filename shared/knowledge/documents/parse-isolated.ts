import { DocumentError, type DocumentErrorCode } from '../../errors';
import { isolatedPool, serveAsWorker, type IsolatedPool } from '../../isolated-workers';
import type { Extracted } from '../../search/extract';
import { DEFAULT_PARSE_LIMITS, parseLimits } from './parse-limits';
import { libraryFormatOf, parseDocument } from './parse-document';

/**
 * PDF and Office files are read in worker threads with a heap limit and a deadline: a file that
 * needs more memory, or more time (even on one page), ends its worker — the worker is replaced and
 * the file reported as DOCUMENT_TOO_LARGE or PARSE_TIMEOUT — instead of taking the ingestion worker
 * down. A worker runs this same module file (the Lambda bundle, or the source under tsx), which
 * serves parse requests when it finds itself started as one. Where no worker can be started from
 * it (a test runner's transformed modules), files are read in the calling thread, bounded as before.
 */

const ROLE = 'cairn-document-parser';
/** Heap a worker may use for one file (its code included; typed arrays are outside it, bounded by the file's size). */
export const PARSE_HEAP_MB = 768;

interface Request {
  file: { path: string; contentType?: string; bytes: Uint8Array };
  timeoutMs: number;
}
type Reply = { ok: Extracted } | { error: { code?: DocumentErrorCode; message: string } };

serveAsWorker<Request, Reply>(ROLE, (request) =>
  parseDocument(request.file, parseLimits({ timeoutMs: request.timeoutMs }))
    .then((ok): Reply => ({ ok }))
    .catch((error: unknown): Reply => ({ error: error instanceof DocumentError ? { code: error.code, message: error.message } : { message: (error as Error).message } })),
);

// One worker: with the ingestion function's 2 GB, a second one's heap could take the process's memory.
const pools = new Map<number, IsolatedPool<Request, Reply>>();
const poolOf = (heapMb: number) => pools.get(heapMb) ?? pools.set(heapMb, isolatedPool<Request, Reply>(ROLE, import.meta.url, { size: 1, heapMb })).get(heapMb)!;

/**
 * Parses a file in a worker when its format is read by a library (PDF, Office); text stays in the
 * calling thread (it is cheap, and bounded by its size).
 */
export async function parseIsolated(
  file: { path: string; contentType?: string; bytes: Uint8Array },
  options: { timeoutMs?: number; heapMb?: number; mainContent?: boolean } = {},
): Promise<Extracted> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_PARSE_LIMITS.timeoutMs;
  const inThread = () => parseDocument(file, parseLimits({ timeoutMs }), { mainContent: options.mainContent });
  if (!libraryFormatOf(file)) return inThread();
  const heapMb = options.heapMb ?? PARSE_HEAP_MB;
  const bytes = file.bytes.slice(); // the worker takes the copy's buffer
  const outcome = await poolOf(heapMb).call({ file: { ...file, bytes }, timeoutMs } satisfies Request, { timeoutMs: timeoutMs + 1000, transfer: [bytes.buffer] });
  if (!outcome) return inThread();
  if ('reply' in outcome) {
    const reply = outcome.reply;
    if ('ok' in reply) return reply.ok;
    throw reply.error.code ? new DocumentError(reply.error.code, reply.error.message) : new DocumentError('UNREADABLE_DOCUMENT', reply.error.message);
  }
  if (outcome.failure === 'memory') throw new DocumentError('DOCUMENT_TOO_LARGE', `Reading the file needed more than ${heapMb} MB of memory`);
  if (outcome.failure === 'timeout') throw new DocumentError('PARSE_TIMEOUT', `Reading the file took more than ${Math.round(timeoutMs / 1000)} s`);
  throw new DocumentError('UNREADABLE_DOCUMENT', `Reading the file failed (${outcome.message})`);
}

/** Whether files are read in workers here (false until the first library format is read, or where none can start). */
export const parsingIsolated = () => [...pools.values()].some((p) => p.isolated());
