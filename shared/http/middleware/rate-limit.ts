import type { MiddlewareHandler } from 'hono';
import { RateLimitedError } from '../../errors';
import { limitsFor, type RateArea } from '../../plans';
import type { Runtime } from '../../runtime';
import type { AppEnv } from '../context';

/**
 * Per key and area, fixed windows of a minute and an hour, counted in DynamoDB so every instance
 * shares them. Headers go on every response, the 429 included: `X-RateLimit-Limit` is the minute
 * limit, `Remaining` the smaller remainder of the two windows, `Reset` the seconds until the window
 * that binds resets.
 */
export function rateLimit(rt: Runtime, area: RateArea): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { keyId, scope, plan } = c.get('identity');
    const limits = limitsFor(plan, area);
    if (!limits) return next();
    const now = rt.clock.now();
    const counts = await rt.store.rateCounters.consumeRequest(scope, keyId, area, limits, now);
    const minuteLeft = Math.max(0, limits.minute - counts.minute);
    const hourLeft = Math.max(0, limits.hour - counts.hour);
    const minuteReset = Math.ceil((60_000 - (now % 60_000)) / 1000);
    const hourReset = Math.ceil((3_600_000 - (now % 3_600_000)) / 1000);
    const hourBinds = hourLeft < minuteLeft || (!counts.allowed && counts.hour >= limits.hour);
    const reset = hourBinds ? hourReset : minuteReset;
    c.header('X-RateLimit-Limit', String(limits.minute));
    c.header('X-RateLimit-Remaining', String(Math.min(minuteLeft, hourLeft)));
    c.header('X-RateLimit-Reset', String(reset));
    if (!counts.allowed) {
      c.header('Retry-After', String(reset));
      throw new RateLimitedError(reset, {
        area,
        window: hourBinds ? 'hour' : 'minute',
        limit: hourBinds ? limits.hour : limits.minute,
      });
    }
    await next();
  };
}
