import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { log } from './log';

/**
 * Work that must not take its process down — a document parser's, a tenant's code — run in worker
 * threads with a heap limit and a deadline: a worker that runs out of memory or time is ended and
 * replaced, and the caller told which. A worker runs the module that serves the work (the Lambda
 * bundle, or the source under tsx), which answers requests when it finds itself started for its
 * role. Where no worker can be started from it, the caller is told so and does the work itself.
 */

/** In a worker started for `role`: answers each request with `handle`'s reply (its errors are the handler's to turn into replies). */
export function serveAsWorker<Request, Reply>(role: string, handle: (request: Request) => Promise<Reply>): void {
  if (isMainThread || (workerData as { role?: string } | null)?.role !== role) return;
  parentPort!.postMessage({ ready: true });
  parentPort!.on('message', (request: Request) => {
    void handle(request).then((reply) => parentPort!.postMessage(reply));
  });
}

/** Why a worker gave no reply. */
export type WorkerFailure = { failure: 'memory' | 'timeout' | 'exit'; message: string };

export interface IsolatedPool<Request, Reply> {
  /** The worker's reply, or why it gave none; undefined where no worker can start here (do the work in this thread). */
  call(request: Request, options: { timeoutMs: number; transfer?: ArrayBuffer[] }): Promise<{ reply: Reply } | WorkerFailure | undefined>;
  /** Whether work has run in workers here (false before the first call, or where none can start). */
  isolated(): boolean;
}

interface Slot {
  worker: Worker;
  busy: boolean;
}

/** A pool of at most `size` workers running `moduleUrl` for `role`, each with `heapMb` of heap. */
export function isolatedPool<Request, Reply>(role: string, moduleUrl: string, options: { size: number; heapMb: number }): IsolatedPool<Request, Reply> {
  let pool: Slot[] = [];
  // Workers being started count towards the pool's size before they join it.
  let starting = 0;
  let unavailable = false;
  let started = false;
  const waiting: Array<() => void> = [];

  /** A worker running the module, once it has loaded it (it says so); a module it cannot load rejects. */
  function startWorker(): Promise<Worker> {
    const url = new URL(moduleUrl);
    const workerOptions = { workerData: { role }, resourceLimits: { maxOldGenerationSizeMb: options.heapMb } };
    // A bundle is plain JavaScript; under tsx (npm start) the worker registers tsx's loader first.
    const source = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); })`;
    return new Promise((resolve, reject) => {
      const worker = url.pathname.endsWith('.ts') ? new Worker(source, { ...workerOptions, eval: true }) : new Worker(url, workerOptions);
      worker.once('message', () => {
        worker.off('error', reject);
        resolve(worker);
      });
      worker.once('error', reject);
    });
  }

  async function takeSlot(): Promise<Slot | undefined> {
    for (;;) {
      if (unavailable) return undefined;
      const free = pool.find((s) => !s.busy);
      if (free) {
        free.busy = true;
        return free;
      }
      if (pool.length + starting < options.size) {
        starting++;
        try {
          const slot: Slot = { worker: await startWorker(), busy: true };
          pool.push(slot);
          started = true;
          return slot;
        } catch (error) {
          unavailable = true;
          log.warn('work stays in the calling thread: no worker could start', { role, reason: (error as Error).message });
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

  async function call(request: Request, callOptions: { timeoutMs: number; transfer?: ArrayBuffer[] }): Promise<{ reply: Reply } | WorkerFailure | undefined> {
    const slot = await takeSlot();
    if (!slot) return undefined;
    return new Promise((resolve) => {
      let settled = false;
      const finish = (broken: boolean, outcome: { reply: Reply } | WorkerFailure) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        slot.worker.off('message', onMessage);
        slot.worker.off('error', onError);
        slot.worker.off('exit', onExit);
        release(slot, broken);
        resolve(outcome);
      };
      const onMessage = (reply: Reply) => finish(false, { reply });
      const onError = (error: Error & { code?: string }) =>
        finish(true, error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? { failure: 'memory', message: `the work needed more than ${options.heapMb} MB of memory` } : { failure: 'exit', message: error.message });
      const onExit = () => finish(true, { failure: 'exit', message: 'the worker ended' });
      const timer = setTimeout(() => finish(true, { failure: 'timeout', message: `the work took more than ${callOptions.timeoutMs} ms` }), callOptions.timeoutMs);
      slot.worker.ref(); // work in hand keeps the process alive
      slot.worker.on('message', onMessage);
      slot.worker.once('error', onError);
      slot.worker.once('exit', onExit);
      slot.worker.postMessage(request, callOptions.transfer ?? []);
    });
  }

  return { call, isolated: () => started && !unavailable };
}
