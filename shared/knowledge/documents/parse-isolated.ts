import { DocumentError, type DocumentErrorCode } from '../../errors';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { log } from '../../log';
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
/** One worker: with the ingestion function's 2 GB, a second one's heap could take the process's memory. */
const POOL_SIZE = 1;

interface Request {
  file: { path: string; contentType?: string; bytes: Uint8Array };
  timeoutMs: number;
}
type Reply = { ok: Extracted } | { error: { code?: DocumentErrorCode; message: string } };

if (!isMainThread && (workerData as { role?: string } | null)?.role === ROLE) {
  parentPort!.postMessage({ ready: true });
  parentPort!.on('message', (request: Request) => {
    void parseDocument(request.file, parseLimits({ timeoutMs: request.timeoutMs }))
      .then((ok): Reply => ({ ok }))
      .catch((error: unknown): Reply => ({ error: error instanceof DocumentError ? { code: error.code, message: error.message } : { message: (error as Error).message } }))
      .then((reply) => parentPort!.postMessage(reply));
  });
}

interface Slot {
  worker: Worker;
  busy: boolean;
}

let pool: Slot[] = [];
/** Workers being started: they count towards the pool's size before they join it. */
let starting = 0;
let unavailable = false;
let started = false;
const waiting: Array<() => void> = [];

/** A worker running this module, once it has loaded it (it says so); a module it cannot load rejects. */
function startWorker(heapMb: number): Promise<Worker> {
  const url = new URL(import.meta.url);
  const options = { workerData: { role: ROLE }, resourceLimits: { maxOldGenerationSizeMb: heapMb } };
  // A bundle is plain JavaScript; under tsx (npm start) the worker registers tsx's loader first.
  const source = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); })`;
  return new Promise((resolve, reject) => {
    const worker = url.pathname.endsWith('.ts') ? new Worker(source, { ...options, eval: true }) : new Worker(url, options);
    worker.once('message', () => {
      worker.off('error', reject);
      resolve(worker);
    });
    worker.once('error', reject);
  });
}

async function takeSlot(heapMb: number): Promise<Slot | undefined> {
  for (;;) {
    if (unavailable) return undefined;
    const free = pool.find((s) => !s.busy);
    if (free) {
      free.busy = true;
      return free;
    }
    if (pool.length + starting < POOL_SIZE) {
      starting++;
      try {
        const slot: Slot = { worker: await startWorker(heapMb), busy: true };
        pool.push(slot);
        started = true;
        return slot;
      } catch (error) {
        unavailable = true;
        log.warn('document parsing stays in the calling thread: no worker could start', { reason: (error as Error).message });
        return undefined;
      } finally {
        starting--;
      }
    }
    await new Promise<void>((resolve) => waiting.push(resolve));
  }
}

function release(slot: Slot, broken: boolean) {
  if (broken) {
    void slot.worker.terminate();
    pool = pool.filter((s) => s !== slot);
  } else {
    slot.busy = false;
    slot.worker.unref(); // an idle worker does not keep the process alive
  }
  waiting.shift()?.();
}

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
  const slot = await takeSlot(options.heapMb ?? PARSE_HEAP_MB);
  if (!slot) return inThread();
  const bytes = file.bytes.slice(); // the worker takes the copy's buffer
  return new Promise<Extracted>((resolve, reject) => {
    let settled = false;
    const finish = (broken: boolean, outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      slot.worker.off('message', onMessage);
      slot.worker.off('error', onError);
      slot.worker.off('exit', onExit);
      release(slot, broken);
      outcome();
    };
    const onMessage = (reply: Reply) =>
      finish(false, () => ('ok' in reply ? resolve(reply.ok) : reject(reply.error.code ? new DocumentError(reply.error.code, reply.error.message) : new DocumentError('UNREADABLE_DOCUMENT', reply.error.message))));
    const onError = (error: Error & { code?: string }) =>
      finish(true, () =>
        reject(
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? new DocumentError('DOCUMENT_TOO_LARGE', `Reading the file needed more than ${options.heapMb ?? PARSE_HEAP_MB} MB of memory`)
            : new DocumentError('UNREADABLE_DOCUMENT', `Reading the file failed (${error.message})`),
        ),
      );
    const onExit = () => finish(true, () => reject(new DocumentError('UNREADABLE_DOCUMENT', 'Reading the file ended its worker')));
    const timer = setTimeout(() => finish(true, () => reject(new DocumentError('PARSE_TIMEOUT', `Reading the file took more than ${Math.round(timeoutMs / 1000)} s`))), timeoutMs + 1000);
    slot.worker.ref(); // a file being read keeps the process alive
    slot.worker.on('message', onMessage);
    slot.worker.once('error', onError);
    slot.worker.once('exit', onExit);
    slot.worker.postMessage({ file: { ...file, bytes }, timeoutMs } satisfies Request, [bytes.buffer]);
  });
}

/** Whether files are read in workers here (false until the first library format is read, or where none can start). */
export const parsingIsolated = () => started && !unavailable;
