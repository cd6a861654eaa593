import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MAX_RECEIVES, type Delivery } from '../shared/queue/queue';
import { storedQueue } from '../shared/queue/stored-queue';
import { testRt } from './helpers/runtime';
import { waitFor } from './helpers/processes';

const store = testRt.store.queueMessages;
const where = () => ({ namespace: randomBytes(6).toString('hex'), name: 'q' });

describe('the stored queue (local mode)', () => {
  it('delivers each message once, and is empty after', async () => {
    const at = where();
    const got: number[] = [];
    const queue = storedQueue<{ n: number }>(store, at, async (m) => void got.push(m.n), { visibilityMs: 5000 });
    await queue.start();
    await queue.send(Array.from({ length: 30 }, (_, n) => ({ n })));
    await queue.drain();
    await queue.stop();
    expect(got.sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, n) => n));
    expect(await store.pending(at.namespace, at.name)).toEqual([]);
  });

  it('redelivers a failed message with a higher receive count, and dead-letters it after the last', async () => {
    const at = where();
    const deliveries: Delivery[] = [];
    const queue = storedQueue<{ n: number }>(store, at, async (_m, d) => {
      deliveries.push(d);
      throw new Error('boom');
    }, { visibilityMs: 5000, retryDelayMs: 10 });
    await queue.start();
    await queue.send([{ n: 1 }]);
    await queue.drain();
    await queue.stop();
    expect(deliveries.map((d) => d.receiveCount)).toEqual(Array.from({ length: MAX_RECEIVES }, (_, i) => i + 1));
    const dead = await store.deadLetters(at.namespace, at.name);
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({ body: JSON.stringify({ n: 1 }), receiveCount: MAX_RECEIVES, reason: 'boom' });
  });

  it('holds a delayed message back', async () => {
    const at = where();
    const seen: number[] = [];
    const queue = storedQueue<{ n: number }>(store, at, async () => void seen.push(Date.now()), { visibilityMs: 5000 });
    await queue.start();
    const sent = Date.now();
    await queue.send([{ n: 1 }], { delaySeconds: 1 });
    await queue.drain();
    await queue.stop();
    expect(seen[0]! - sent).toBeGreaterThanOrEqual(1000);
  });

  it('sleeps while idle: it wakes for a message sent through it and when a delayed one becomes visible, not on a fixed poll', async () => {
    const at = where();
    let peeks = 0;
    const counted = { ...store, peek: (...args: Parameters<typeof store.peek>) => (peeks++, store.peek(...args)) };
    const seen: number[] = [];
    const queue = storedQueue<{ n: number }>(counted, at, async () => void seen.push(Date.now()), { visibilityMs: 5000, pollMs: 60_000 });
    await queue.start();
    await new Promise((r) => setTimeout(r, 600));
    expect(peeks).toBe(1); // an empty queue was read once, then left alone

    const sent = Date.now();
    await queue.send([{ n: 1 }], { delaySeconds: 1 });
    await waitFor(() => seen.length === 1, 'the delayed message', 5000);
    expect(seen[0]! - sent).toBeGreaterThanOrEqual(1000);
    expect(peeks).toBeLessThanOrEqual(6); // woken by the send, asleep until it was due, then a read after the take and after the work
    await queue.stop();
  });

  it('does not sleep through a message sent while it was reading the queue', async () => {
    const at = where();
    // Each read answers 300 ms late: the send below lands after the first read, before its answer.
    const slow = { ...store, peek: async (...args: Parameters<typeof store.peek>) => {
      const read = await store.peek(...args);
      await new Promise((r) => setTimeout(r, 300));
      return read;
    } };
    const got: number[] = [];
    const queue = storedQueue<{ n: number }>(slow, at, async (m) => void got.push(m.n), { visibilityMs: 5000, pollMs: 60_000 });
    await queue.start();
    await new Promise((r) => setTimeout(r, 50));
    await queue.send([{ n: 4 }]);
    await waitFor(() => got.length === 1, 'the message', 5000);
    await queue.stop();
    expect(got).toEqual([4]);
  });

  it('sees a message another process put in the table within its longest sleep', async () => {
    const at = where();
    const got: number[] = [];
    const queue = storedQueue<{ n: number }>(store, at, async (m) => void got.push(m.n), { visibilityMs: 5000, pollMs: 200 });
    await queue.start();
    await new Promise((r) => setTimeout(r, 50));
    await store.send(at.namespace, at.name, [JSON.stringify({ n: 3 })], Date.now());
    await waitFor(() => got.length === 1, 'the message', 5000);
    await queue.stop();
    expect(got).toEqual([3]);
  });

  it('keeps a message it works on longer than the visibility timeout (heartbeat): no second delivery', async () => {
    const at = where();
    let deliveries = 0;
    const queue = storedQueue<{ n: number }>(store, at, async () => {
      deliveries++;
      await new Promise((r) => setTimeout(r, 1500));
    }, { visibilityMs: 300, concurrency: 2 });
    await queue.start();
    await queue.send([{ n: 1 }]);
    await queue.drain();
    await queue.stop();
    expect(deliveries).toBe(1);
  });

  it('gives a message taken by a receiver that died back when its lease runs out, or at once on release', async () => {
    const at = where();
    await store.send(at.namespace, at.name, [JSON.stringify({ n: 7 })], Date.now());
    // A receiver takes it and dies: no heartbeat, no acknowledgement.
    const { visible: [message] } = await store.peek(at.namespace, at.name, Date.now(), 1);
    expect(await store.move(at.namespace, at.name, message!, Date.now() + 800, { received: true, leased: true })).toBeDefined();
    const got: Delivery[] = [];
    const queue = storedQueue<{ n: number }>(store, at, async (_m, d) => void got.push(d), { visibilityMs: 5000 });
    await queue.start();
    const started = Date.now();
    await waitFor(() => got.length === 1, 'the redelivery', 5000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    expect(got[0]!.receiveCount).toBe(2);
    await queue.stop();

    // On a restart that owns the data, a message still taken is released at once.
    await store.send(at.namespace, at.name, [JSON.stringify({ n: 8 })], Date.now());
    const { visible: [again] } = await store.peek(at.namespace, at.name, Date.now(), 1);
    await store.move(at.namespace, at.name, again!, Date.now() + 60_000, { received: true, leased: true });
    const restarted = storedQueue<{ n: number }>(store, at, async (_m, d) => void got.push(d), { visibilityMs: 5000 });
    await restarted.start({ releaseTaken: true });
    await waitFor(() => got.length === 2, 'the released message', 5000);
    await restarted.stop();
  });

  it('lets exactly one of two receivers take a message', async () => {
    const at = where();
    await store.send(at.namespace, at.name, [JSON.stringify({ n: 1 })], Date.now());
    const { visible: [message] } = await store.peek(at.namespace, at.name, Date.now(), 1);
    const both = await Promise.all([1, 2].map(() => store.move(at.namespace, at.name, message!, Date.now() + 5000, { received: true, leased: true })));
    expect(both.filter((m) => m !== undefined)).toHaveLength(1);
  });
});
