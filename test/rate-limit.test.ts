import { describe, expect, it } from 'vitest';
import { createAgentsApp } from '../functions/agents/app';
import { systemClock } from '../shared/clock';
import { createStore } from '../shared/store';
import { createDb } from '../shared/store/db';
import { dynamoTotals } from '../shared/store/request-metrics';
import { createWorkflowsApp } from '../functions/workflows/app';
import { call } from './helpers/http';
import { newTenant } from './helpers/tenant';
import { testRt } from './helpers/runtime';

/** Fixed windows: start a burst early in a minute so it cannot straddle two windows. */
async function awayFromMinuteEdge() {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 45_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 200));
}

describe('rate limits', () => {
  it('lets exactly 100 of 150 concurrent requests through two app instances on a free key', async () => {
    const t = await newTenant('free');
    const instances = [createAgentsApp(testRt), createAgentsApp(testRt)];
    await awayFromMinuteEdge();
    const responses = await Promise.all(
      Array.from({ length: 150 }, (_, i) => call(instances[i % 2]!, 'GET', '/v1/agents', { key: t.apiKey })),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(100);
    expect(statuses.filter((s) => s === 429)).toHaveLength(50);
    for (const res of responses) {
      expect(res.headers.get('x-ratelimit-limit')).toBe('100');
      const reset = Number(res.headers.get('x-ratelimit-reset'));
      expect(reset).toBeGreaterThan(0);
      expect(reset).toBeLessThanOrEqual(60);
    }
    const remaining = responses.filter((r) => r.status === 200).map((r) => Number(r.headers.get('x-ratelimit-remaining')));
    expect(new Set(remaining).size).toBe(100); // each success saw its own count
    expect(Math.min(...remaining)).toBe(0);
    const limited = responses.find((r) => r.status === 429)!;
    expect(limited.body.error.code).toBe('RATE_LIMITED');
    expect(limited.body.error.details).toMatchObject({ area: 'agents', window: 'minute', limit: 100 });
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(limited.headers.get('retry-after')).toBe(limited.headers.get('x-ratelimit-reset'));
  });

  it('keeps a budget per area: spent workflows do not block agents', async () => {
    const t = await newTenant('free');
    const workflows = createWorkflowsApp(testRt);
    const agents = createAgentsApp(testRt);
    await awayFromMinuteEdge();
    for (let i = 0; i < 20; i++) expect((await call(workflows, 'GET', '/v1/workflows', { key: t.apiKey })).status).toBe(200);
    const spent = await call(workflows, 'GET', '/v1/workflows', { key: t.apiKey });
    expect(spent.status).toBe(429);
    expect(spent.headers.get('x-ratelimit-limit')).toBe('20');
    const other = await call(agents, 'GET', '/v1/agents', { key: t.apiKey });
    expect(other.status).toBe(200);
    expect(other.headers.get('x-ratelimit-remaining')).toBe('99');
  });

  it('multiplies limits by plan and leaves unlimited keys alone', async () => {
    const pro = await newTenant('pro');
    const res = await call(createAgentsApp(testRt), 'GET', '/v1/agents', { key: pro.apiKey });
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('999');
    const unlimited = await newTenant('unlimited');
    const app = createAgentsApp(testRt);
    const all = await Promise.all(Array.from({ length: 120 }, () => call(app, 'GET', '/v1/agents', { key: unlimited.apiKey })));
    expect(all.every((r) => r.status === 200)).toBe(true);
    expect(all[0]!.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('binds on the hour window once the hour is spent, across minutes', async () => {
    const t = await newTenant('free');
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    const limits = { minute: 5, hour: 7 };
    const inMinute = (m: number) => hour + m * 60_000 + 1000;
    const first: boolean[] = [];
    for (let i = 0; i < 6; i++) first.push((await testRt.store.rateCounters.consumeRequest(t.scope, t.keyId, 'agents', limits, inMinute(0))).allowed);
    expect(first).toEqual([true, true, true, true, true, false]);
    const second = [];
    for (let i = 0; i < 3; i++) second.push(await testRt.store.rateCounters.consumeRequest(t.scope, t.keyId, 'agents', limits, inMinute(1)));
    expect(second.map((c) => c.allowed)).toEqual([true, true, false]);
    expect(second[2]).toMatchObject({ hour: 7, minute: 2 });
    // The next hour starts afresh.
    expect((await testRt.store.rateCounters.consumeRequest(t.scope, t.keyId, 'agents', limits, hour + 3_600_000 + 1000)).allowed).toBe(true);
  });

  it('refuses a spent key without writing again until its minute ends, and asks again under new limits', async () => {
    const t = await newTenant('free');
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    const limits = { minute: 3, hour: 100 };
    const consume = (at: number, l = limits) => testRt.store.rateCounters.consumeRequest(t.scope, t.keyId, 'agents', l, at);
    for (let i = 0; i < 3; i++) expect((await consume(minute + 1000 + i)).allowed).toBe(true);
    expect(await consume(minute + 2000)).toEqual({ allowed: false, minute: 3, hour: 3 });
    const before = dynamoTotals().dynamoRequests;
    const refused = await Promise.all(Array.from({ length: 20 }, (_, i) => consume(minute + 3000 + i)));
    expect(refused.every((c) => !c.allowed && c.minute === 3 && c.hour === 3)).toBe(true);
    expect(dynamoTotals().dynamoRequests - before).toBe(0);
    // A bigger plan is asked of the store at once; the next minute starts afresh.
    expect((await consume(minute + 4000, { minute: 10, hour: 100 })).allowed).toBe(true);
    expect(dynamoTotals().dynamoRequests - before).toBe(1);
    expect((await consume(minute + 61_000)).allowed).toBe(true);
  });

  it('sends no rate-limit headers without a valid key', async () => {
    const res = await call(createAgentsApp(testRt), 'GET', '/v1/agents', { key: 'cak_not-a-real-key-at-all' });
    expect(res.status).toBe(401);
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
  });

  describe('a busy key, counted in blocks', () => {
    /** The stored counters, as a fresh instance sees them when it takes one request (itself included). */
    const countersWithOneMore = (t: Awaited<ReturnType<typeof newTenant>>, limits: { minute: number; hour: number }, at: number) =>
      createStore(createDb(), systemClock).rateCounters.consumeRequest(t.scope, t.keyId, 'agents', limits, at);

    it('counts every request of a busy instance exactly, writing the counter about once per block', async () => {
      const t = await newTenant('free');
      const limits = { minute: 1000, hour: 10_000 }; // blocks of up to 10
      const start = Math.floor(Date.now() / 3_600_000) * 3_600_000 + 1000;
      const before = dynamoTotals().dynamoRequests;
      const seen = [];
      for (let i = 0; i < 200; i++) seen.push(await testRt.store.rateCounters.consumeRequest(t.scope, t.keyId, 'agents', limits, start + i));
      const writes = dynamoTotals().dynamoRequests - before;
      expect(seen.every((c) => c.allowed)).toBe(true);
      // Each request is told its own place in the window, as if counted one by one.
      expect(seen.map((c) => c.minute)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
      expect(writes).toBeLessThanOrEqual(30);
      expect(writes).toBeGreaterThanOrEqual(20);
      // What was taken but not yet used is counted: the stored counters never lag behind.
      expect((await countersWithOneMore(t, limits, start + 200)).minute).toBeGreaterThan(200);
    });

    it('never lets more through than the limit across instances, and loses at most a block each', async () => {
      const t = await newTenant('free');
      const limits = { minute: 300, hour: 3000 }; // blocks of up to 3
      const instances = [createStore(createDb(), systemClock), createStore(createDb(), systemClock)];
      const start = Math.floor(Date.now() / 3_600_000) * 3_600_000 + 2000;
      // Eight callers at a time on each instance, 500 requests in all, in the same minute.
      const results: Array<{ allowed: boolean }> = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async (_, w) => {
          while (next < 500) results.push(await instances[w % 2]!.rateCounters.consumeRequest(t.scope, t.keyId, 'agents', limits, start + next++));
        }),
      );
      expect(results).toHaveLength(500);
      const allowed = results.filter((c) => c.allowed).length;
      expect(allowed).toBeLessThanOrEqual(300);
      expect(allowed).toBeGreaterThanOrEqual(300 - 2 * 3);
    });

    it('lets the whole limit through when concurrent calls of one instance race for the last blocks', async () => {
      const t = await newTenant('free');
      const limits = { minute: 1000, hour: 10_000 }; // blocks of up to 10
      const start = Math.floor(Date.now() / 3_600_000) * 3_600_000 + 3000;
      const results: Array<{ allowed: boolean }> = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          while (next < 1000) results.push(await testRt.store.rateCounters.consumeRequest(t.scope, t.keyId, 'agents', limits, start + next++));
        }),
      );
      expect(results.filter((c) => c.allowed)).toHaveLength(1000);
      expect((await testRt.store.rateCounters.consumeRequest(t.scope, t.keyId, 'agents', limits, start + 1000)).allowed).toBe(false);
    });

    it('gives a minute’s unused requests back to the hour with the next minute’s first write', async () => {
      const t = await newTenant('free');
      const limits = { minute: 200, hour: 2000 }; // blocks of up to 2
      const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
      const take = (at: number) => testRt.store.rateCounters.consumeRequest(t.scope, t.keyId, 'agents', limits, at);
      await take(hour + 1000);
      await take(hour + 1001); // takes a block of 2: one left over
      expect(await countersWithOneMore(t, limits, hour + 1002)).toMatchObject({ minute: 4, hour: 4 });
      await take(hour + 61_000); // the next minute, a block of 1 and the leftover back
      expect(await countersWithOneMore(t, limits, hour + 61_001)).toMatchObject({ minute: 2, hour: 5 });
    });
  });
});
