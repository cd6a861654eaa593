import { errorFields, log } from '../log';
import { MAX_RECEIVES, type Consumer, type Queue } from './queue';

/**
 * The in-process queue of local mode: at-least-once like SQS (a failed message is redelivered
 * with backoff, and after MAX_RECEIVES it is dead-lettered: logged and kept), with a few messages
 * in flight at once.
 */
export interface LocalQueue<M> extends Queue<M> {
  /** Resolves when nothing is queued or in flight (tests, shutdown). */
  drain(): Promise<void>;
  readonly deadLetters: M[];
}

export function localQueue<M>(name: string, consumer: Consumer<M>, options: { concurrency?: number; retryDelayMs?: number } = {}): LocalQueue<M> {
  const concurrency = options.concurrency ?? 2;
  const retryDelayMs = options.retryDelayMs ?? 200;
  const waiting: Array<{ message: M; receiveCount: number }> = [];
  const deadLetters: M[] = [];
  let inFlight = 0;
  let delayed = 0;
  let idle: Array<() => void> = [];

  const settle = () => {
    if (waiting.length === 0 && inFlight === 0 && delayed === 0) {
      for (const resolve of idle) resolve();
      idle = [];
    }
  };

  const pump = () => {
    while (inFlight < concurrency && waiting.length > 0) {
      const next = waiting.shift()!;
      inFlight++;
      const delivery = { receiveCount: next.receiveCount, maxReceives: MAX_RECEIVES };
      consumer(next.message, delivery)
        .catch((error: unknown) => {
          if (next.receiveCount >= MAX_RECEIVES) {
            deadLetters.push(next.message);
            log.error('message dead-lettered', { queue: name, ...errorFields(error) });
            return;
          }
          log.warn('message failed; redelivering', { queue: name, receiveCount: next.receiveCount, ...errorFields(error) });
          delayed++;
          setTimeout(() => {
            delayed--;
            waiting.push({ message: next.message, receiveCount: next.receiveCount + 1 });
            pump();
          }, retryDelayMs * 2 ** (next.receiveCount - 1)).unref();
        })
        .finally(() => {
          inFlight--;
          pump();
          settle();
        });
    }
  };

  return {
    async send(messages, options = {}) {
      const copies = messages.map((message) => ({ message: structuredClone(message), receiveCount: 1 }));
      if (!options.delaySeconds) {
        waiting.push(...copies);
        setImmediate(pump);
        return;
      }
      delayed++;
      setTimeout(() => {
        delayed--;
        waiting.push(...copies);
        pump();
      }, options.delaySeconds * 1000).unref();
    },
    drain: () =>
      new Promise<void>((resolve) => {
        idle.push(resolve);
        setImmediate(settle);
      }),
    deadLetters,
  };
}
