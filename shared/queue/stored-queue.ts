import { detached } from '../work-frame';
import { errorFields, log } from '../log';
import { traceCarrier } from '../telemetry';
import type { QueueMessagesStore, StoredMessage } from '../store/queue-messages';
import { withHeartbeat } from './heartbeat';
import { deliver, MAX_RECEIVES, type Consumer, type Queue } from './queue';

/**
 * Local mode's queue: messages live in the table (store/queue-messages.ts), so nothing queued is
 * lost when the process dies, with SQS's semantics: at least once; a taken message is invisible
 * for a visibility timeout that the worker's heartbeat extends while it works; a failed message
 * comes back with backoff and after MAX_RECEIVES goes to the dead letters. A worker killed mid-
 * message stops its heartbeat, so the message comes back by itself when its lease runs out.
 */
export interface StoredQueue<M> extends Queue<M> {
  /** Starts receiving in this process; `releaseTaken` first makes an earlier run's leases visible at once. */
  start(options?: { releaseTaken?: boolean }): Promise<void>;
  /** Stops receiving and waits for the messages in hand. */
  stop(): Promise<void>;
  /** Resolves when nothing is queued (delayed messages included) or in hand (tests, benchmarks). */
  drain(): Promise<void>;
}

export interface StoredQueueOptions {
  /** Messages in hand at once. */
  concurrency?: number;
  /** How long a taken message stays invisible without a heartbeat. */
  visibilityMs: number;
  /** The first redelivery's delay after a failure; it doubles with each receive. */
  retryDelayMs?: number;
  /**
   * The longest an idle receiver sleeps: it wakes at once for a message sent through this queue
   * and when the next message it read becomes visible, so this only bounds how late it sees a
   * message another process sent.
   */
  pollMs?: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export function storedQueue<M>(
  store: QueueMessagesStore,
  where: { namespace: string; name: string },
  consumer: Consumer<M>,
  options: StoredQueueOptions,
): StoredQueue<M> {
  const { namespace, name } = where;
  const concurrency = options.concurrency ?? 2;
  const retryDelayMs = options.retryDelayMs ?? 200;
  // An idle local server must not keep DynamoDB Local busy: three receivers polling every 250 ms
  // cost it a tenth of a core.
  const pollMs = options.pollMs ?? 2000;
  const inHand = new Set<Promise<void>>();
  let running = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;

  // Counted, so that a send or a finished message during a read is not missed by the sleep after it.
  let pokes = 0;
  const poke = () => {
    pokes++;
    wake?.();
    wake = undefined;
  };
  /** Sleeps until `until` (at most pollMs, at least a few ms: a test's fixed clock never gets there) or a poke. */
  const idle = (until: number | undefined) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      const ms = until === undefined ? pollMs : Math.min(pollMs, Math.max(20, until - store.clock.now()));
      setTimeout(resolve, ms).unref();
    });

  /**
   * Handles a taken message, then wakes the receiver when it may have work it could not take: a
   * message given back to retry, or the slot of a full receiver freed. (A message handled while
   * others waited for nothing costs no read of the queue.)
   */
  function handled(taken: StoredMessage): Promise<void> {
    const work: Promise<void> = handle(taken).then((retry) => {
      const wasFull = inHand.size >= concurrency;
      inHand.delete(work);
      if (retry || wasFull) poke();
    });
    inHand.add(work);
    return work;
  }

  /** Delivers a taken message and settles it; true when it was given back to be retried. */
  async function handle(taken: StoredMessage): Promise<boolean> {
    let receipt = taken;
    // The heartbeat and the final acknowledgement must not overlap: each needs the current receipt
    // (withHeartbeat waits for the last beat).
    const beat = async () => {
      receipt = (await store.move(namespace, name, receipt, store.clock.now() + options.visibilityMs, { leased: true }).catch(() => undefined)) ?? receipt;
    };
    let failure: unknown;
    try {
      await withHeartbeat(beat, Math.max(50, Math.floor(options.visibilityMs / 3)), () =>
        deliver(consumer, receipt.body, { receiveCount: receipt.receiveCount, maxReceives: MAX_RECEIVES }, { messageId: receipt.messageId, carrier: receipt.attributes }),
      );
    } catch (error) {
      failure = error ?? new Error('consumer failed');
    }
    try {
      if (failure === undefined) {
        await store.remove(namespace, name, receipt);
        return false;
      }
      if (receipt.receiveCount >= MAX_RECEIVES) {
        log.error('message dead-lettered', { queue: name, messageId: receipt.messageId, ...errorFields(failure) });
        await store.deadLetter(namespace, name, receipt, failure instanceof Error ? failure.message : JSON.stringify(failure));
      } else {
        log.warn('message failed; redelivering', { queue: name, messageId: receipt.messageId, receiveCount: receipt.receiveCount, ...errorFields(failure) });
        await store.move(namespace, name, receipt, store.clock.now() + retryDelayMs * 2 ** (receipt.receiveCount - 1), { leased: false });
      }
    } catch (error) {
      // The message stays where it is and comes back when its lease runs out.
      log.warn('queue settle failed', { queue: name, messageId: receipt.messageId, ...errorFields(error) });
    }
    return failure !== undefined;
  }

  async function receive(): Promise<void> {
    while (running) {
      const free = concurrency - inHand.size;
      const pokesBefore = pokes;
      let took = 0;
      let nextVisibleAt: number | undefined;
      if (free > 0) {
        try {
          const now = store.clock.now();
          const peeked = await store.peek(namespace, name, now, free);
          nextVisibleAt = peeked.nextVisibleAt;
          for (const message of peeked.visible) {
            const taken = await store.move(namespace, name, message, now + options.visibilityMs, { received: true, leased: true });
            if (!taken) continue; // another receiver took it first
            took++;
            void handled(taken);
          }
        } catch (error) {
          log.warn('queue receive failed', { queue: name, ...errorFields(error) });
        }
      }
      if ((took === 0 || inHand.size >= concurrency) && pokes === pokesBefore) await idle(nextVisibleAt);
    }
  }

  return {
    async send(messages, sendOptions = {}) {
      const delayMs = Math.min(900, Math.max(0, sendOptions.delaySeconds ?? 0)) * 1000;
      const bodies = messages.map((m) => JSON.stringify(m));
      // What this process's receiver has room for now is taken as it is written: no read, no move.
      const handed = running && delayMs === 0 ? bodies.slice(0, Math.max(0, concurrency - inHand.size)) : [];
      const rest = bodies.slice(handed.length);
      const carrier = traceCarrier();
      const now = store.clock.now();
      const [taken] = await Promise.all([
        handed.length > 0 ? store.send(namespace, name, handed, now + options.visibilityMs, carrier, true) : [],
        rest.length > 0 ? store.send(namespace, name, rest, now + delayMs, carrier) : [],
      ]);
      for (const message of taken) void detached(() => handled(message));
      if (rest.length > 0) poke();
    },
    async pending() {
      return (await store.pending(namespace, name)).length;
    },
    async start(startOptions = {}) {
      if (running) return;
      if (startOptions.releaseTaken) {
        // Only one process serves a data directory, so leases still held were held by a dead run.
        const taken = (await store.pending(namespace, name)).filter((m) => m.leased);
        for (const message of taken) await store.move(namespace, name, message, store.clock.now(), { leased: false });
        if (taken.length > 0) log.info('queue: released messages of an earlier run', { queue: name, count: taken.length });
      }
      running = true;
      loop = receive();
    },
    async stop() {
      running = false;
      poke();
      await loop;
      await Promise.all(inHand);
    },
    async drain() {
      for (;;) {
        if (inHand.size === 0 && (await store.pending(namespace, name)).length === 0) return;
        await sleep(20);
      }
    },
  };
}
