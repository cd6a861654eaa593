import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { errorOf } from '../../../test/helpers/http';
import { testRt } from '../../../test/helpers/runtime';
import { newTenant } from '../../../test/helpers/tenant';
import type { Plan } from '../../config';
import type { AppEnv } from '../context';
import { errorHandler } from '../error-handler';
import { rateLimit } from './rate-limit';

/** The limiter alone: an identity set as API-key auth would set it. */
async function appFor(plan: Plan) {
  const t = await newTenant(plan);
  const app = new Hono<AppEnv>();
  app.use('*', async (c, next) => {
    c.set('identity', { keyId: t.keyId, scope: t.scope, plan });
    await next();
  });
  app.use('*', rateLimit(testRt, 'workflows'));
  app.onError(errorHandler);
  app.get('/', (c) => c.json({ ok: true }));
  return app;
}

describe('rateLimit', () => {
  it('admits the plan’s minute budget with headers counting down, then 429 with Retry-After', async () => {
    const app = await appFor('free'); // workflows: 20 a minute
    const remaining: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await app.request('/');
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('20');
      remaining.push(res.headers.get('x-ratelimit-remaining')!);
    }
    expect(remaining[0]).toBe('19');
    expect(remaining[19]).toBe('0');
    const over = await app.request('/');
    expect(over.status).toBe(429);
    expect(await errorOf(over)).toMatchObject({ code: 'RATE_LIMITED', details: { area: 'workflows', window: 'minute', limit: 20 } });
    const retryAfter = Number(over.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(over.headers.get('x-ratelimit-reset')).toBe(String(retryAfter));
  });

  it('leaves unlimited keys alone: no counting, no headers', async () => {
    const app = await appFor('unlimited');
    const res = await app.request('/');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
  });
});
